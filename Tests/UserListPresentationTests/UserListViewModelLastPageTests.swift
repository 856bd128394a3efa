import Foundation
import Testing
import UserListDomain
import UserListPresentation

/// `showLastPage` ("G"): the list's end read directly, the rows above it loaded upward, `refresh`
/// back to the top, and live changes applied to a window that does not start at the first user.
@MainActor
@Suite struct UserListViewModelLastPageTests {
    let all = numberedUsers(12)

    /// A list of 12 users in pages of 5, showing its last page (users 7 to 11).
    private func listAtTheEnd() async -> (UserListViewModel, StateRecorder<UserListState>, FakeUserRepository) {
        let repository = FakeUserRepository(all)
        let (list, states, _) = makeList(repository, pageSize: 5)
        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive {
            $0.loading = .none; $0.users = Array(all[0..<5]); $0.hasMore = true; $0.totalCount = 12
        }
        list.showLastPage()
        states.expect { $0.loading = .fullScreen }
        await states.receive {
            $0.loading = .none; $0.users = Array(all[7..<12]); $0.hasMore = false; $0.hasPrevious = true
        }
        return (list, states, repository)
    }

    @Test func showLastPageReplacesTheRowsWithTheEndInOneRead() async {
        let (_, states, repository) = await listAtTheEnd()
        #expect(repository.backwardRequests == [BackwardPageRequest(before: nil, limit: 5, search: nil)])
        #expect(repository.pageRequests.count == 1)  // only the first page, no walk
        states.expectNoMoreChanges()
    }

    @Test func showLastPageKeepsTheSearch() async {
        let repository = FakeUserRepository(all + [ada, bob])
        let (list, states, _) = makeList(repository, pageSize: 5)
        list.search("user 1")
        states.expect { $0.loading = .fullScreen; $0.search = "user 1" }
        await states.receive { $0.loading = .none; $0.users = Array(all[10..<12]); $0.totalCount = 2 }
        list.showLastPage()
        states.expect { $0.loading = .fullScreen }
        await states.receive { $0.loading = .none }  // the same two rows: the whole match, nothing before
        #expect(repository.backwardRequests == [BackwardPageRequest(before: nil, limit: 5, search: "user 1")])
        states.expectNoMoreChanges()
        #expect(list.state.users == Array(all[10..<12]) && !list.state.hasPrevious)
    }

    @Test func displayingTheTopRowsLoadsThePagesBeforeThem() async {
        let (list, states, repository) = await listAtTheEnd()
        list.didDisplayRow(at: 3)  // not near the top
        list.didDisplayRow(at: 4)
        await settle()
        states.expectNoMoreChanges()

        list.didDisplayRow(at: 2)
        states.expect { $0.loading = .previousPage }
        await states.receive { $0.loading = .none; $0.users = Array(all[2..<12]) }
        #expect(repository.backwardRequests.count == 2 && repository.backwardRequests[1].before != nil)

        list.didDisplayRow(at: 0)
        states.expect { $0.loading = .previousPage }
        await states.receive { $0.loading = .none; $0.users = all; $0.hasPrevious = false }

        list.didDisplayRow(at: 0)  // the top: nothing more to load
        await settle()
        states.expectNoMoreChanges()
        #expect(repository.backwardRequests.count == 3)
    }

    @Test func refreshGoesBackToTheTop() async {
        let (list, states, _) = await listAtTheEnd()
        list.refresh()
        states.expect { $0.loading = .fullScreen }
        await states.receive {
            $0.loading = .none; $0.users = Array(all[0..<5]); $0.hasMore = true; $0.hasPrevious = false
        }
        states.expectNoMoreChanges()
    }

    @Test func aFailedLastPageKeepsTheRowsShown() async {
        let repository = FakeUserRepository(all)
        let (list, states, _) = makeList(repository, pageSize: 5)
        list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive {
            $0.loading = .none; $0.users = Array(all[0..<5]); $0.hasMore = true; $0.totalCount = 12
        }
        repository.failNext(with: .unavailable(reason: "disk on fire"))
        list.showLastPage()
        states.expect { $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.errorMessage = UserError.unavailable(reason: "disk on fire").message }
        states.expectNoMoreChanges()
    }

    // MARK: changes while at the end

    @Test func anAddedUserSortingBeforeTheWindowIsCountedNotShown() async {
        let (list, states, _) = await listAtTheEnd()
        list.apply(.added(user(50, "User 03x")))
        states.expect { $0.totalCount = 13 }
        states.expectNoMoreChanges()
    }

    @Test func anAddedUserInsideOrAfterTheWindowIsShown() async {
        let (list, states, _) = await listAtTheEnd()
        let inside = user(51, "User 08x")
        list.apply(.added(inside))
        states.expect { $0.users = Array(all[7...8]) + [inside] + Array(all[9..<12]); $0.totalCount = 13 }
        let last = user(52, "User 99")
        list.apply(.added(last))
        states.expect { $0.users.append(last); $0.totalCount = 14 }
        states.expectNoMoreChanges()
    }

    @Test func aRemovalBeforeTheWindowIsCounted() async {
        let (list, states, _) = await listAtTheEnd()
        list.apply(.removed(id: userID(1)))
        states.expect { $0.totalCount = 11 }
        list.apply(.removed(id: userID(9)))
        states.expect { $0.users = Array(all[7...8]) + Array(all[10..<12]); $0.totalCount = 10 }
        states.expectNoMoreChanges()
    }

    @Test func aRowRenamedToSortBeforeTheWindowLeavesIt() async {
        let (list, states, _) = await listAtTheEnd()
        var moved = all[9]
        moved.name = "User 00a"
        moved.version = 2
        list.apply(.saved(moved))
        states.expect { $0.users = Array(all[7...8]) + Array(all[10..<12]) }  // still counted
        var back = all[1]
        back.name = "User 10a"
        back.version = 2
        list.apply(.saved(back))  // from before the window into it: shown, already counted
        states.expect { $0.users = Array(all[7...8]) + [all[10], back, all[11]] }
        states.expectNoMoreChanges()
        #expect(list.state.totalCount == 12)
    }

    /// A session journal written before `hasPrevious` existed still restores.
    @Test func aStateWithoutHasPreviousDecodes() throws {
        let json = #"{"users":[],"loading":"none","hasMore":true,"search":"ada","isStale":false}"#
        let state = try JSONDecoder().decode(UserListState.self, from: Data(json.utf8))
        #expect(!state.hasPrevious && state.hasMore && state.search == "ada")
    }
}
