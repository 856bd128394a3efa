import Foundation
import Testing
import UserListDomain
import UserListPresentation

/// Changes committed elsewhere reach the list through `Navigator.follow(_:)`.
@MainActor
@Suite struct UserListLiveUpdateTests {
    let repository: FakeUserRepository
    let feed = FakeChangeFeed()
    let navigator: Navigator
    let states: StateRecorder<UserListState>
    let events = EventLog<NavigatorEvent>()

    init() {
        repository = FakeUserRepository()
        navigator = Navigator(useCases: UserUseCases(repository: repository))
        states = StateRecorder(navigator.list.state)
        navigator.onStateChange = { [navigator, states] in states.record(navigator.list.state) }
        navigator.onEvent = { [events] in events.append($0) }
        navigator.follow(feed)
    }

    /// Loads `users` (given in name order) and asserts the load.
    private func load(_ users: [User]) async {
        for user in users { repository.put(user) }
        navigator.list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.users = users; $0.totalCount = users.count }
        // Every change here is made elsewhere, which marks the list stale; mark it up front so
        // the expectations below are about the rows alone.
        navigator.list.markStale()
        states.expect { $0.isStale = true }
    }

    private func send(_ change: UserChange) async {
        let before = events.all.count
        feed.send(change)
        await events.awaitCount(before + 1)
        #expect(events.all.last == .changed(change))
    }

    @Test func followSubscribesOnce() {
        #expect(feed.subscriberCount == 1)
    }

    @Test func aSaveRenamesTheRowInPlace() async {
        await load([ada, bob, cleo])
        var bobby = bob
        bobby.name = "Bobby Dylan"
        bobby.version = 2

        await send(.saved(bobby))
        states.expect { $0.users = [ada, bobby, cleo] }
        states.expectNoMoreChanges()
        #expect(navigator.list.state.totalCount == 3)
    }

    @Test func anOlderSaveArrivingLateDoesNotUndoANewerOne() async {
        await load([ada, bob, cleo])
        var second = bob
        second.name = "Bob Second"
        second.version = 3
        var first = bob
        first.name = "Bob First"
        first.version = 2

        await send(.saved(second))
        states.expect { $0.users = [ada, second, cleo] }
        await send(.saved(first))
        states.expectNoMoreChanges()
        #expect(navigator.list.state.users[1] == second)
    }

    @Test func aSaveThatChangesTheNameReSortsTheRow() async {
        await load([ada, bob, cleo])
        var zed = ada
        zed.name = "zed"          // the store orders case-insensitively
        zed.version = 2

        await send(.saved(zed))
        states.expect { $0.users = [bob, cleo, zed] }
        states.expectNoMoreChanges()
    }

    @Test func aSaveAlreadyShownChangesNothing() async {
        await load([ada, bob])
        await send(.saved(bob))
        states.expectNoMoreChanges()
    }

    @Test func anAddInsertsInNameOrder() async {
        await load([ada, bob, dora])
        #expect(navigator.list.state.totalCount == 3)
        let carl = user(105, "carl")
        let aaron = user(106, "Aaron")
        let zoe = user(107, "Zoe")

        await send(.added(carl))
        states.expect { $0.users = [ada, bob, carl, dora]; $0.totalCount = 4 }
        await send(.added(aaron))
        states.expect { $0.users = [aaron, ada, bob, carl, dora]; $0.totalCount = 5 }
        await send(.added(zoe))   // every page is loaded: the end of the list is the end
        states.expect { $0.users = [aaron, ada, bob, carl, dora, zoe]; $0.totalCount = 6 }
        await send(.added(zoe))   // seen already
        states.expectNoMoreChanges()
    }

    @Test func aRemoveDeletesTheRowAndTheTotalFollows() async {
        await load([ada, bob, cleo])
        await send(.removed(id: bob.id))
        states.expect { $0.users = [ada, cleo]; $0.totalCount = 2 }
        states.expectNoMoreChanges()
    }

    @Test func aRemoveOfAUserNotListedWhenEverythingIsLoadedKeepsTheTotal() async {
        await load([ada, bob])
        await send(.removed(id: userID(999)))
        states.expectNoMoreChanges()
        #expect(navigator.list.state.totalCount == 2)
    }

    @Test func aSaveThatNoLongerMatchesTheSearchDropsTheRow() async {
        for user in [ada, bob, cleo] { repository.put(user) }
        navigator.list.search("b")
        states.expect { $0.search = "b"; $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.users = [bob]; $0.totalCount = 1 }

        var renamed = bob
        renamed.name = "Rupert"            // no "b" anywhere: search is a substring match
        renamed.email = "rupert@example.com"
        renamed.version = 2
        await send(.saved(renamed))
        states.expect { $0.users = []; $0.totalCount = 0; $0.isStale = true }

        await send(.added(user(110, "Ann")))   // does not match "b"
        await send(.added(user(111, "Bea")))
        states.expect { $0.users = [user(111, "Bea")]; $0.totalCount = 1 }
        states.expectNoMoreChanges()
    }

    @Test func aSaveThatNowMatchesTheSearchAddsTheRow() async {
        for user in [ada, bob, cleo] { repository.put(user) }
        navigator.list.search("b")
        states.expect { $0.search = "b"; $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.users = [bob]; $0.totalCount = 1 }

        var renamed = cleo
        renamed.name = "Bella"
        renamed.version = 2
        await send(.saved(renamed))
        states.expect { $0.users = [renamed, bob]; $0.totalCount = 2; $0.isStale = true }
        states.expectNoMoreChanges()
    }

    @Test func changesBeforeTheFirstLoadAreHarmless() async {
        await send(.removed(id: ada.id))
        await send(.saved(ada))
        #expect(navigator.list.state.users.count <= 1)
        #expect(navigator.list.state.totalCount == nil)
    }
}

/// Live updates on a list that has more pages than it shows: 55 users, pages of 50.
@MainActor
@Suite struct PagedListLiveUpdateTests {
    let all = numberedUsers(55)
    let repository: FakeUserRepository
    let feed = FakeChangeFeed()
    let navigator: Navigator
    let states: StateRecorder<UserListState>
    let events = EventLog<NavigatorEvent>()

    init() {
        repository = FakeUserRepository(all)
        navigator = Navigator(useCases: UserUseCases(repository: repository))
        states = StateRecorder(navigator.list.state)
        navigator.onStateChange = { [navigator, states] in states.record(navigator.list.state) }
        navigator.onEvent = { [events] in events.append($0) }
        navigator.follow(feed)
    }

    private func loadFirstPage() async {
        navigator.list.onAppear()
        states.expect { $0.loading = .fullScreen }
        await states.receive {
            $0.loading = .none; $0.users = Array(all[0..<50]); $0.hasMore = true; $0.totalCount = 55
        }
        navigator.list.markStale()   // every change here is made elsewhere (see above)
        states.expect { $0.isStale = true }
    }

    private func send(_ change: UserChange) async {
        let before = events.all.count
        feed.send(change)
        await events.awaitCount(before + 1)
    }

    @Test func anAddPastTheLoadedRowsIsLeftForItsPageButCounted() async {
        await loadFirstPage()
        let late = user(200, "User 99")
        await send(.added(late))
        states.expect { $0.totalCount = 56 }

        let early = user(201, "User 02a")
        await send(.added(early))
        states.expect {
            $0.users = Array(all[0..<3]) + [early] + Array(all[3..<50])
            $0.totalCount = 57
        }
        states.expectNoMoreChanges()

        // The page that holds the late one brings it, once.
        repository.put(late)
        repository.put(early)
        navigator.list.didDisplayRow(at: 48)
        states.expect { $0.loading = .nextPage }
        await states.receive {
            $0.loading = .none
            $0.users = Array(all[0..<3]) + [early] + Array(all[3...]) + [late]
            $0.hasMore = false
            $0.totalCount = 57
        }
    }

    @Test func aSavedRowThatSortsPastTheLoadedRowsLeavesUntilItsPageComes() async {
        await loadFirstPage()
        var moved = all[1]
        moved.name = "User 50a"
        moved.version = 2
        await send(.saved(moved))
        states.expect { $0.users = [all[0]] + Array(all[2..<50]) }
        states.expectNoMoreChanges()
    }

    @Test func aSavedRowFromALaterPageThatSortsIntoTheLoadedRowsAppears() async {
        await loadFirstPage()
        var moved = all[52]
        moved.name = "User 01a"
        moved.version = 2
        await send(.saved(moved))
        states.expect { $0.users = Array(all[0..<2]) + [moved] + Array(all[2..<50]) }
        states.expectNoMoreChanges()
    }

    @Test func aRemoveOfARowNotLoadedYetLowersTheTotal() async {
        await loadFirstPage()
        await send(.removed(id: all[53].id))
        states.expect { $0.totalCount = 54 }
        await send(.removed(id: all[0].id))
        states.expect { $0.users = Array(all[1..<50]); $0.totalCount = 53 }
        states.expectNoMoreChanges()
    }
}
