import Foundation
import Testing
import UserListDomain
import UserListPresentation

/// The list screen's paging, the order of its responses, selection and search, each asserted
/// change by change (the first load, failures and refresh are in `UserListViewModelTests`).
@MainActor
@Suite struct UserListViewModelPagingTests {
    // MARK: paging

    @Test func theNextPageLoadsOnlyFromThePrefetchBoundary() async {
        let repository = FakeUserRepository(numberedUsers(12))
        let all = numberedUsers(12)
        let (list, states, _) = makeList(repository, pageSize: 5)
        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive {
            $0.loading = .none; $0.users = Array(all[0..<5]); $0.hasMore = true; $0.totalCount = 12
        }
        #expect(UserListViewModel.prefetchDistance == 3)

        // count - 4 is not near enough to the end.
        list.didDisplayRow(at: 0)
        list.didDisplayRow(at: 1)
        await settle()
        states.expectNoMoreChanges()
        #expect(repository.count(of: .fetchPage) == 1)

        // count - 3 is.
        repository.hold(.fetchPage)
        list.didDisplayRow(at: 2)
        states.expect { $0.loading = .nextPage }
        await repository.awaitHeldCalls(1)
        let second = repository.pageRequests[1]
        #expect(second.after != nil)
        #expect(second.limit == 5 && second.search == nil)

        repository.release()
        await states.receive { $0.loading = .none; $0.users = Array(all[0..<10]) }

        // The last page: hasMore turns false and nothing more is asked for.
        repository.stopHolding(.fetchPage)
        list.didDisplayRow(at: 6)
        await settle()
        states.expectNoMoreChanges()
        list.didDisplayRow(at: 7)
        states.expect { $0.loading = .nextPage }
        await states.receive { $0.loading = .none; $0.users = all; $0.hasMore = false }

        list.didDisplayRow(at: 11)
        list.didDisplayRow(at: 100)
        await settle()
        states.expectNoMoreChanges()
        #expect(repository.count(of: .fetchPage) == 3)
    }

    @Test func noSecondPageLoadWhileOneRuns() async {
        let repository = FakeUserRepository(numberedUsers(12))
        let (list, states, _) = makeList(repository, pageSize: 5)
        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.users = Array(numberedUsers(5)); $0.hasMore = true; $0.totalCount = 12 }

        repository.hold(.fetchPage)
        list.didDisplayRow(at: 4)
        list.didDisplayRow(at: 4)
        list.didDisplayRow(at: 3)
        await repository.awaitHeldCalls(1)
        await settle()
        #expect(repository.count(of: .fetchPage) == 2)
        states.expect { $0.loading = .nextPage }
        states.expectNoMoreChanges()

        repository.releaseAll()
        await states.receive { $0.loading = .none; $0.users = Array(numberedUsers(10)) }
        #expect(repository.count(of: .fetchPage) == 2)
    }

    @Test func noPageLoadWhileTheFirstLoadRuns() async {
        let repository = FakeUserRepository(numberedUsers(12))
        let (list, states, _) = makeList(repository, pageSize: 5)
        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.users = Array(numberedUsers(5)); $0.hasMore = true; $0.totalCount = 12 }

        repository.hold(.fetchPage)
        list.refresh()
        states.expect { $0.loading = .fullScreen }
        list.didDisplayRow(at: 4)
        await repository.awaitHeldCalls(1)
        await settle()
        #expect(repository.count(of: .fetchPage) == 2)
        #expect(repository.pageRequests.map(\.after) == [nil, nil])
        states.expectNoMoreChanges()
        repository.releaseAll()
        await states.receive { $0.loading = .none }
    }

    @Test func aFailedNextPageKeepsTheRowsAndRetriesFromTheSameCursor() async throws {
        let repository = FakeUserRepository(numberedUsers(12))
        let (list, states, _) = makeList(repository, pageSize: 5)
        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.users = Array(numberedUsers(5)); $0.hasMore = true; $0.totalCount = 12 }

        repository.failNext(with: .unavailable(reason: "timeout"))
        list.didDisplayRow(at: 4)
        states.expect { $0.loading = .nextPage }
        await states.receive { $0.loading = .none; $0.errorMessage = "The user store is unavailable: timeout" }

        list.didDisplayRow(at: 4)
        states.expect { $0.errorMessage = nil; $0.loading = .nextPage }
        await states.receive { $0.loading = .none; $0.users = Array(numberedUsers(10)) }
        let requests = repository.pageRequests
        try #require(requests.count == 3)
        #expect(requests[1].after != nil && requests[1] == requests[2])
    }

    // MARK: ordering of responses

    @Test func aSupersededLoadCannotOverwriteNewerState() async {
        let repository = FakeUserRepository([ada])
        repository.hold(.fetchPage)
        let (list, states, _) = makeList(repository)

        list.onAppear()                       // load A answers [ada]
        states.expect { $0.loading = .fullScreen }
        await repository.awaitHeldCalls(1)
        repository.put(bob)
        list.refresh()                        // load B answers [ada, bob]
        await repository.awaitHeldCalls(2)
        states.expectNoMoreChanges()          // already loading full screen

        repository.release(at: 1)             // B arrives first
        await states.receive { $0.loading = .none; $0.users = [ada, bob]; $0.totalCount = 2 }

        repository.release(at: 0)             // then A, too late
        await settle()
        states.expectNoMoreChanges()
        #expect(list.state.users == [ada, bob])
        #expect(list.state.loading == .none)
    }

    @Test func aRefreshSupersedesANextPageLoad() async {
        let repository = FakeUserRepository(numberedUsers(12))
        let (list, states, _) = makeList(repository, pageSize: 5)
        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.users = Array(numberedUsers(5)); $0.hasMore = true; $0.totalCount = 12 }

        repository.hold(.fetchPage)
        list.didDisplayRow(at: 4)             // page 2, held
        states.expect { $0.loading = .nextPage }
        await repository.awaitHeldCalls(1)
        list.refresh()                        // page 1 again, held
        states.expect { $0.loading = .fullScreen }
        await repository.awaitHeldCalls(2)

        repository.release(at: 1)
        await states.receive { $0.loading = .none }
        repository.release(at: 0)             // the stale page 2 must not be appended
        await settle()
        states.expectNoMoreChanges()
        #expect(list.state.users == Array(numberedUsers(5)))

        // Paging continues from the refreshed first page.
        repository.stopHolding(.fetchPage)
        list.didDisplayRow(at: 4)
        states.expect { $0.loading = .nextPage }
        await states.receive { $0.loading = .none; $0.users = Array(numberedUsers(10)) }
    }

    // MARK: selection

    @Test func selectingARowEmitsItsID() async {
        let repository = FakeUserRepository([ada, bob, cleo])
        let (list, states, events) = makeList(repository)
        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.users = [ada, bob, cleo]; $0.totalCount = 3 }

        list.didSelectRow(at: 1)
        list.didSelectRow(at: 0)
        list.didSelectRow(at: 2)
        #expect(events.all == [.userSelected(id: bob.id), .userSelected(id: ada.id), .userSelected(id: cleo.id)])
        states.expectNoMoreChanges()
    }

    @Test(arguments: [-1, 3, 4, Int.min, Int.max])
    func selectingOutsideTheRowsIsIgnored(index: Int) async {
        let repository = FakeUserRepository([ada, bob, cleo])
        let (list, states, events) = makeList(repository)
        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.users = [ada, bob, cleo]; $0.totalCount = 3 }

        list.didSelectRow(at: index)
        #expect(events.all.isEmpty)
        #expect(!list.hasRow(at: index))
        states.expectNoMoreChanges()
    }

    @Test func selectingBeforeAnythingLoadedIsIgnored() {
        let (list, _, events) = makeList(FakeUserRepository([ada]))
        list.didSelectRow(at: 0)
        #expect(events.all.isEmpty)
    }

    // MARK: search

    @Test func searchFiltersAndStartsFromTheFirstPage() async {
        let repository = FakeUserRepository(numberedUsers(12) + [ada])
        let (list, states, _) = makeList(repository, pageSize: 5)
        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive {
            $0.loading = .none; $0.users = [ada] + numberedUsers(4); $0.hasMore = true; $0.totalCount = 13
        }
        list.didDisplayRow(at: 4)
        states.expect { $0.loading = .nextPage }
        await states.receive { $0.users = [ada] + numberedUsers(9); $0.loading = .none }

        list.search("  user 1 ")
        states.expect { $0.search = "user 1"; $0.loading = .fullScreen }
        await states.receive {
            $0.loading = .none
            $0.users = [numberedUsers(12)[10], numberedUsers(12)[11]]
            $0.hasMore = false
            $0.totalCount = 2
        }
        #expect(repository.pageRequests.last == PageRequest(after: nil, limit: 5, search: "user 1"))

        // Paging under a search uses the search too.
        list.search("USER")
        states.expect { $0.search = "USER"; $0.loading = .fullScreen }
        await states.receive {
            $0.loading = .none; $0.users = numberedUsers(5); $0.hasMore = true; $0.totalCount = 12
        }
        list.didDisplayRow(at: 2)
        states.expect { $0.loading = .nextPage }
        await states.receive { $0.loading = .none; $0.users = numberedUsers(10) }
        #expect(repository.pageRequests.last?.search == "USER")
        #expect(repository.pageRequests.last?.after != nil)

        // Blank text lists everyone again.
        list.search("   ")
        states.expect { $0.search = nil; $0.loading = .fullScreen }
        await states.receive {
            $0.loading = .none; $0.users = [ada] + numberedUsers(4); $0.totalCount = 13
        }
        #expect(repository.pageRequests.last == PageRequest(after: nil, limit: 5, search: nil))
        states.expectNoMoreChanges()
    }

    @Test func searchMatchesEmailPrefixesToo() async {
        let repository = FakeUserRepository([ada, bob, cleo])
        let (list, states, _) = makeList(repository)
        list.search("bob.d")
        states.expect { $0.search = "bob.d"; $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.users = [bob]; $0.totalCount = 1 }

        list.onAppear()  // a search counts as the first load
        await settle()
        states.expectNoMoreChanges()
    }
}
