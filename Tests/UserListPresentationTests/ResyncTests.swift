import Foundation
import Testing
import UserListDomain
import UserListPresentation

/// `UserChange.resync` (the feed lost track of changes): every screen reads what it shows again,
/// in place, and the list keeps as many rows as it had loaded.
@MainActor
@Suite struct ResyncTests {
    let repository = FakeUserRepository(numberedUsers(55))
    let feed = FakeChangeFeed()
    let navigator: Navigator
    let states: StateRecorder<NavigationState>
    let events = EventLog<NavigatorEvent>()

    init() {
        navigator = Navigator(useCases: UserUseCases(repository: repository))
        states = StateRecorder(navigator.state)
        navigator.onStateChange = { [navigator, states] in states.record(navigator.state) }
        navigator.onEvent = { [events] in events.append($0) }
        navigator.follow(feed)
    }

    /// Loads both pages (55 rows, pages of 50), asserting each step.
    private func loadAll() async {
        navigator.list.onAppear()
        states.expect { $0.screens = [.list(self.list(loading: .fullScreen))] }
        await states.receive { $0.screens = [.list(self.list(numberedUsers(50), more: true, total: 55))] }
        navigator.list.didDisplayRow(at: 49)
        states.expect { $0.screens = [.list(self.list(numberedUsers(50), more: true, total: 55, loading: .nextPage))] }
        await states.receive { $0.screens = [.list(self.list(numberedUsers(55), total: 55))] }
    }

    private func list(_ users: [User] = [], more: Bool = false, total: Int? = nil, loading: UserListState.Loading = .none) -> UserListState {
        var list = UserListState()
        list.users = users
        list.hasMore = more
        list.totalCount = total
        list.loading = loading
        return list
    }

    @Test func theListReloadsItsLoadedRowsInPlaceInOneChangeWithoutAnEvent() async {
        await loadAll()
        // Changes the feed never delivered: a rename that moves a row, a removal, an addition.
        var all = numberedUsers(55)
        let renamed = User(id: all[3].id, name: "User 99", email: all[3].email, version: 2)
        repository.put(renamed)
        repository.delete(all[10].id)
        let added = user(200, "User 07a")
        repository.put(added)
        all.remove(at: 10)
        all.remove(at: 3)
        all.insert(added, at: 7)
        all.append(renamed)
        let requestsBefore = repository.pageRequests.count

        feed.send(.resync)
        // No loading indicator in between: the old rows, then the fresh ones.
        await states.receive { $0.screens = [.list(self.list(all, total: 55))] }
        await settle()
        states.expectNoMoreChanges()
        #expect(events.all.isEmpty, "a resync is not a change to announce")
        #expect(Array(repository.pageRequests.dropFirst(requestsBefore)) == [PageRequest(limit: 55)],
                "one request for the rows loaded, from the first")
    }

    @Test func aResyncBeforeTheListLoadedReadsNothing() async {
        feed.send(.resync)
        feed.send(.removed(id: userID(1)))  // delivered after it: the resync was handled first
        await events.awaitCount(1)
        #expect(repository.pageRequests.isEmpty)
    }

    @Test func anUntouchedDetailFollowsTheStoredUserAndADraftIsKept() async throws {
        await loadAll()
        let first = numberedUsers(2)[0], second = numberedUsers(2)[1]
        _ = await navigator.openUser(first.id)
        states.expect { $0.screens.append(.detail(self.detail(first))) }

        // Untouched: follows what is stored now.
        let stored = User(id: first.id, name: "User 00 renamed", email: first.email, version: 2)
        repository.put(stored)
        feed.send(.resync)
        await states.until {
            navigator.topDetail?.state.user == stored && navigator.list.state.users.contains(stored)
        }
        #expect(navigator.topDetail?.state == detail(stored))

        // With a draft: the draft is kept and merged with what is stored now: both changed the
        // name, so it is a conflict, and nothing is saved until the person chooses.
        _ = await navigator.openUser(second.id)
        navigator.topDetail?.setDraftName("My draft")
        let newer = User(id: second.id, name: "User 01 elsewhere", email: second.email, version: 2)
        repository.put(newer)
        let reads = repository.count(of: .fetchUser)
        feed.send(.resync)
        await repository.awaitCalls(of: .fetchUser, count: reads + 1)
        await states.until { navigator.list.state.users.contains(newer) }
        await settle()
        var merged = detail(newer, draft: "My draft")
        merged.conflicts = [FieldConflict(field: .name, theirs: "User 01 elsewhere", version: 2)]
        #expect(navigator.topDetail?.state == merged)
        let outcome = try await #require(navigator.topDetail).save().value
        guard case .failure(.validation(.name, _)) = outcome else {
            Issue.record("refused: \(outcome)")
            return
        }
        #expect(repository.stored(second.id) == newer, "never overwritten unseen")
        #expect(navigator.topDetail?.state.draftName == "My draft")
    }

    @Test func aDetailWhoseUserWasRemovedMeanwhileShowsItRemoved() async {
        await loadAll()
        let first = numberedUsers(1)[0]
        _ = await navigator.openUser(first.id)
        repository.delete(first.id)
        feed.send(.resync)
        await states.until { navigator.topDetail?.state.user == nil }
        #expect(navigator.topDetail?.state.errorMessage == "This user was removed.")
    }

    private func detail(_ user: User, draft: String? = nil) -> UserDetailState {
        var state = UserDetailState(userID: user.id)
        state.user = user
        state.draft = UserFields(user)
        if let draft { state.draftName = draft }
        return state
    }
}
