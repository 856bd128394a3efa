import Foundation
import Testing
import UserListDomain
import UserListPresentation

/// The list screen's intents, each asserted change by change.
@MainActor
@Suite struct UserListViewModelTests {

    // MARK: first load

    @Test func onAppearShowsFullScreenLoadingThenTheRowsInNameOrder() async {
        let repository = FakeUserRepository([cleo, ada, bob])
        repository.hold(.fetchPage)
        let (list, states, _) = makeList(repository)

        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await repository.awaitHeldCalls(1)
        #expect(repository.pageRequests == [PageRequest(after: nil, limit: 50, search: nil)])
        states.expectNoMoreChanges()

        repository.release()
        await states.receive {
            $0.loading = .none
            $0.users = [ada, bob, cleo]
            $0.totalCount = 3
            $0.hasMore = false
        }
        await settle()
        states.expectNoMoreChanges()
    }

    @Test func onAppearLoadsOnlyOnce() async {
        let repository = FakeUserRepository([ada])
        let (list, states, _) = makeList(repository)

        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.users = [ada]; $0.totalCount = 1 }

        list.onAppear()
        await settle()
        states.expectNoMoreChanges()
        #expect(repository.count(of: .fetchPage) == 1)
    }

    @Test func onAppearTwiceWhileTheFirstLoadRunsStartsOneLoad() async {
        let repository = FakeUserRepository([ada])
        repository.hold(.fetchPage)
        let (list, states, _) = makeList(repository)

        list.onAppear()
        list.onAppear()
        await repository.awaitHeldCalls(1)
        await settle()
        #expect(repository.count(of: .fetchPage) == 1)
        states.expect { $0.loading = .fullScreen }
        states.expectNoMoreChanges()

        repository.releaseAll()
        await states.receive { $0.loading = .none; $0.users = [ada]; $0.totalCount = 1 }
        #expect(repository.count(of: .fetchPage) == 1)
    }

    @Test func anEmptyStoreShowsNoRowsAndNoError() async {
        let repository = FakeUserRepository()
        let (list, states, _) = makeList(repository)

        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.totalCount = 0 }
        states.expectNoMoreChanges()
    }

    @Test func aStalePageIsShownAsStale() async {
        let repository = FakeUserRepository([ada])
        repository.setServesStale(true)
        let (list, states, _) = makeList(repository)

        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive {
            $0.loading = .none; $0.users = [ada]; $0.totalCount = 1; $0.isStale = true
        }

        repository.setServesStale(false)
        list.refresh()
        states.expect { $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.isStale = false }
    }

    @Test func aChangeMadeElsewhereMarksTheListStaleUntilRefresh() async {
        let repository = FakeUserRepository([ada, bob])
        let (list, states, _) = makeList(repository)
        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.users = [ada, bob]; $0.totalCount = 2 }

        let renamed = User(id: bob.id, name: "Bobby", email: bob.email, version: 2)
        list.apply(.saved(renamed), markingStale: true)
        states.expect { $0.users = [ada, renamed]; $0.isStale = true }   // one change, not two

        list.markStale()
        states.expectNoMoreChanges()
        let outcome = await list.refresh().value
        #expect((try? outcome.get()) != nil)
        #expect(!list.state.isStale)
    }

    @Test func aLoadReturnsItsOwnOutcome() async {
        let repository = FakeUserRepository([ada])
        let (list, _, _) = makeList(repository)
        repository.failNext(1, .fetchPage, with: .unavailable(reason: "disk on fire"))
        let failed = await list.onAppear().value
        guard case .failure(let error) = failed else {
            Issue.record("the failed load was reported as a success")
            return
        }
        #expect(error == .unavailable(reason: "disk on fire"))
        // A later intent is judged by its own load, not by the banner the last one left.
        let retried = await list.refresh().value
        #expect((try? retried.get()) != nil)
        // Nothing to load: a finished success.
        #expect((try? await list.didDisplayRow(at: 0).value.get()) != nil)
    }

    // MARK: failure and retry

    @Test func aFailedLoadShowsTheErrorAndStopsLoading() async {
        let repository = FakeUserRepository([ada])
        repository.failNext(with: .unavailable(reason: "disk full"))
        let (list, states, _) = makeList(repository)

        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive {
            $0.loading = .none
            $0.errorMessage = "The user store is unavailable: disk full"
        }
        await settle()
        states.expectNoMoreChanges()
    }

    @Test func retryClearsTheErrorBeforeTheAttemptInOneChange() async {
        let repository = FakeUserRepository([ada])
        repository.failNext(with: .unavailable(reason: "disk full"))
        let (list, states, _) = makeList(repository)
        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.errorMessage = "The user store is unavailable: disk full" }

        repository.hold(.fetchPage)
        list.refresh()
        // The in-flight state already shows no error: never "loading" next to the old failure,
        // and never a blank "not loading, no error" frame in between.
        states.expect { $0.errorMessage = nil; $0.loading = .fullScreen }
        await repository.awaitHeldCalls(1)
        #expect(list.state.errorMessage == nil)
        #expect(list.state.loading == .fullScreen)

        repository.release()
        await states.receive { $0.loading = .none; $0.users = [ada]; $0.totalCount = 1 }
        states.expectNoMoreChanges()
    }

    @Test func aFailedRetryShowsTheNewError() async {
        let repository = FakeUserRepository([ada])
        repository.failNext(with: .unavailable(reason: "disk full"))
        repository.failNext(with: .forbidden(reason: "You may not list users."))
        let (list, states, _) = makeList(repository)
        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.errorMessage = "The user store is unavailable: disk full" }

        list.refresh()
        states.expect { $0.errorMessage = nil; $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.errorMessage = "You may not list users." }
        states.expectNoMoreChanges()
    }

    @Test func aFailedRefreshKeepsTheRowsShown() async {
        let repository = FakeUserRepository([ada, bob])
        let (list, states, _) = makeList(repository)
        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.users = [ada, bob]; $0.totalCount = 2 }

        repository.failNext(with: .unavailable(reason: "upstream down"))
        list.refresh()
        states.expect { $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.errorMessage = "The user store is unavailable: upstream down" }
        #expect(list.state.users == [ada, bob])
    }

    @Test func dismissErrorClearsTheMessage() async {
        let repository = FakeUserRepository([ada])
        repository.failNext(with: .unavailable(reason: "disk full"))
        let (list, states, _) = makeList(repository)
        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.errorMessage = "The user store is unavailable: disk full" }

        list.dismissError()
        states.expect { $0.errorMessage = nil }
        list.dismissError()
        states.expectNoMoreChanges()
        #expect(repository.count(of: .fetchPage) == 1)
    }

    // MARK: refresh

    @Test func refreshReloadsFromTheFirstPage() async {
        let repository = FakeUserRepository(numberedUsers(12))
        let all = numberedUsers(12)
        let (list, states, _) = makeList(repository, pageSize: 5)
        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive {
            $0.loading = .none; $0.users = Array(all[0..<5]); $0.hasMore = true; $0.totalCount = 12
        }
        list.didDisplayRow(at: 4)
        states.expect { $0.loading = .nextPage }
        await states.receive { $0.loading = .none; $0.users = Array(all[0..<10]) }

        repository.delete(userID(0))
        repository.hold(.fetchPage)
        list.refresh()
        states.expect { $0.loading = .fullScreen }  // the rows stay on screen while reloading
        await repository.awaitHeldCalls(1)
        #expect(repository.pageRequests.last == PageRequest(after: nil, limit: 5, search: nil))
        repository.release()
        await states.receive {
            $0.loading = .none; $0.users = Array(all[1..<6]); $0.totalCount = 11
        }
        states.expectNoMoreChanges()
    }
}
