import Foundation
import Testing
import UserListDomain
import UserListPresentation
import ThreadLocks

/// Lists that show the very same rows compute a change once: the second takes the first's
/// outcome, which is exactly what it would have computed, and shares its storage from then on.
/// Lists that differ in anything compute their own.
@MainActor
@Suite struct SharedListOutcomesTests {
    /// Hands every list the same page value for the same request, as the daemon's
    /// `SharedPageRepository` does, so their rows share storage.
    final class PageSharingRepository: UserRepository {
        let inner: FakeUserRepository
        private let pages = Lock<[PageRequest: UserPage]>([:])
        init(_ inner: FakeUserRepository) { self.inner = inner }
        func fetchPage(_ request: PageRequest) async throws(UserError) -> UserPage {
            if let page = pages.withLock({ $0[request] }) { return page }
            let page = try await inner.fetchPage(request)
            pages.withLock { $0[request] = page }
            return page
        }
        func fetchUser(id: UUID) async throws(UserError) -> User { try await inner.fetchUser(id: id) }
        func update(_ user: User) async throws(UserError) -> User { try await inner.update(user) }
        func add(_ user: NewUser) async throws(UserError) -> User { try await inner.add(user) }
        func remove(id: UUID) async throws(UserError) { try await inner.remove(id: id) }
        func cursor(after user: User, totalCount: Int?) -> PageCursor? { inner.cursor(after: user, totalCount: totalCount) }
    }

    private func loadedList(_ repository: any UserRepository, search: String? = nil,
                            pageSize: Int = FetchUserPageUseCase.defaultPageSize) async -> UserListViewModel {
        let list = UserListViewModel(useCases: UserUseCases(repository: repository), pageSize: pageSize)
        if let search {
            _ = await list.search(search).value
        } else {
            _ = await list.onAppear().value
        }
        return list
    }

    /// A store of four users that makes cursors (so an add can cut a list back), and the same
    /// store handing every list the same page value.
    private static func storeMakingCursors() -> (store: FakeUserRepository, sharing: PageSharingRepository) {
        let store = FakeUserRepository([ada, bob, cleo, dora])
        store.setMakesCursors(true)
        return (store, PageSharingRepository(store))
    }

    private static func sharesRows(_ a: UserListViewModel, _ b: UserListViewModel) -> Bool {
        SharedListOutcomes.isSameValue(a.state, b.state)
    }

    @Test func aListInTheSameStateTakesTheOutcomeAndStaysShared() async {
        let repository = PageSharingRepository(FakeUserRepository([ada, bob, cleo]))
        let first = await loadedList(repository)
        let second = await loadedList(repository)
        let control = await loadedList(FakeUserRepository([ada, bob, cleo]))  // its own storage
        #expect(Self.sharesRows(first, second))
        #expect(!Self.sharesRows(first, control))

        var bobby = bob
        bobby.name = "Aaron Bobby"  // sorts first now
        bobby.version = 2
        let outcomes = SharedListOutcomes()
        first.apply(.saved(bobby), markingStale: true, sharing: outcomes)
        second.apply(.saved(bobby), markingStale: true, sharing: outcomes)
        control.apply(.saved(bobby), markingStale: true, sharing: outcomes)

        #expect(first.state.users == [bobby, ada, cleo])
        #expect(second.state == first.state)
        #expect(control.state == first.state, "computed on its own, the same outcome")
        #expect(Self.sharesRows(first, second), "the second took the first's rows")
        #expect(!Self.sharesRows(first, control), "a list with other storage computed its own")

        // Shared again for the next change: still the same value as computing it.
        let removal = SharedListOutcomes()
        first.apply(.removed(id: ada.id), sharing: removal)
        second.apply(.removed(id: ada.id), sharing: removal)
        control.apply(.removed(id: ada.id))
        #expect(second.state == control.state)
        #expect(Self.sharesRows(first, second))
    }

    /// An add that grows the list past its page is cut back to the page, which also moves the
    /// list's cursor: a list in the same state at the same capacity takes both.
    @Test func aTrimmedOutcomeIsSharedWithItsCursor() async {
        let (store, repository) = Self.storeMakingCursors()
        func loadedPage(_ repository: any UserRepository) async -> UserListViewModel {
            await loadedList(repository, pageSize: 2)
        }
        let first = await loadedPage(repository)
        let second = await loadedPage(repository)
        let control = await loadedPage(store)  // its own storage: computes its own
        let aaron = user(100, "Aaron Added")
        store.put(aaron)

        let outcomes = SharedListOutcomes()
        first.apply(.added(aaron), markingStale: true, sharing: outcomes)
        second.apply(.added(aaron), markingStale: true, sharing: outcomes)
        control.apply(.added(aaron), markingStale: true, sharing: outcomes)
        #expect(first.state.users == [aaron, ada], "cut back to its page")
        #expect(second.state == control.state)
        #expect(Self.sharesRows(first, second), "the second took the first's trimmed rows")

        // The cursor came along: the next page goes on after Ada, as the control's does.
        _ = await second.didDisplayRow(at: 1).value
        _ = await control.didDisplayRow(at: 1).value
        #expect(second.state.users == [aaron, ada, bob, cleo])
        #expect(second.state == control.state)
    }

    /// A list followed with others as one (the daemon's shared view) skips the changes, then
    /// catches up to where the others are: the same state as applying each change itself, and
    /// it goes on from there. An outcome that cut rows is not offered for that.
    @Test func aListCatchesUpToTheStateItsSharedViewReached() async throws {
        let (store, repository) = Self.storeMakingCursors()
        func loadedPage(_ repository: any UserRepository) async -> UserListViewModel {
            await loadedList(repository, pageSize: 3)
        }
        let leader = await loadedPage(repository)
        let follower = await loadedPage(repository)
        let control = await loadedPage(store)
        var bobby = bob
        bobby.name = "Aaron Bobby"
        bobby.version = 2
        var reached = follower.state
        for change in [UserChange.saved(bobby), .removed(id: ada.id)] {
            let outcomes = SharedListOutcomes()
            leader.apply(change, markingStale: true, sharing: outcomes)
            control.apply(change, markingStale: true)
            reached = try #require(outcomes.uncutOutcome(from: reached, markingStale: true))
        }
        #expect(follower.catchUp(to: reached))
        #expect(follower.state == control.state)
        _ = await follower.didDisplayRow(at: 1).value
        _ = await control.didDisplayRow(at: 1).value
        #expect(follower.state == control.state, "it goes on as a list that applied each change")

        // An add past the page cuts it back (and moves the cursor): not offered.
        let aaron = user(100, "Aaron Added")
        store.put(aaron)
        let outcomes = SharedListOutcomes()
        let full = await loadedPage(repository)
        let twin = await loadedPage(repository)
        let before = full.state
        full.apply(.added(aaron), markingStale: true, sharing: outcomes)
        #expect(full.state.users.count == 3, "cut back to its page")
        #expect(outcomes.uncutOutcome(from: before, markingStale: true) == nil)
        var tooMany = twin.state
        tooMany.users.append(aaron)
        #expect(!twin.catchUp(to: tooMany), "more rows than it keeps")
        #expect(twin.adoptSharedOutcome(markingStale: true, from: outcomes) != nil, "recorded all the same, for lists that take the cut")
    }

    @Test func listsThatDifferComputeTheirOwn() async {
        let repository = PageSharingRepository(FakeUserRepository([ada, bob, cleo]))
        let everyone = await loadedList(repository)
        let searching = await loadedList(repository, search: "b")
        let outcomes = SharedListOutcomes()
        var cleopatra = cleo
        cleopatra.name = "Bea Cleopatra"  // now matches "b"
        cleopatra.version = 2

        everyone.apply(.saved(cleopatra), markingStale: true, sharing: outcomes)
        searching.apply(.saved(cleopatra), markingStale: true, sharing: outcomes)
        #expect(everyone.state.users == [ada, cleopatra, bob])
        #expect(searching.state.users.map(\.id) == [cleopatra.id, bob.id])

        // Same rows but not marked stale (the session that made the change): its own outcome.
        let other = await loadedList(repository)
        let ownChange = SharedListOutcomes()
        everyone.apply(.removed(id: ada.id), markingStale: true, sharing: ownChange)
        other.apply(.saved(cleopatra), markingStale: false, sharing: outcomes)
        #expect(other.state.isStale == false)
        #expect(other.state.users == [ada, cleopatra, bob])
    }
}
