import Foundation
import Testing
import UserListDomain
import UserListPresentation
import ThreadLocks

/// What a change did to one list (`UserListStep`) replays on a list in the very same state:
/// exactly what it would have computed, sharing the first list's storage from then on. A list
/// that differs in anything, or could not reach that outcome, refuses it and applies the change.
@MainActor
@Suite struct UserListStepTests {
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
        a.state.isIdentical(to: b.state)
    }

    /// Replays `step` on `list`, or applies `change` when it refuses; returns whether it replayed.
    @discardableResult
    private func follow(_ list: UserListViewModel, _ change: UserChange, _ step: UserListStep) -> Bool {
        if list.replay(step) { return true }
        list.apply(change, markingStale: step.markingStale)
        return false
    }

    @Test func aListInTheSameStateReplaysTheStepAndStaysShared() async {
        let repository = PageSharingRepository(FakeUserRepository([ada, bob, cleo]))
        let first = await loadedList(repository)
        let second = await loadedList(repository)
        let control = await loadedList(FakeUserRepository([ada, bob, cleo]))  // its own storage
        #expect(Self.sharesRows(first, second))
        #expect(!Self.sharesRows(first, control))

        var bobby = bob
        bobby.name = "Aaron Bobby"  // sorts first now
        bobby.version = 2
        let step = first.apply(.saved(bobby), markingStale: true)
        var told = 0
        second.onStateChange = { told += 1 }
        #expect(second.replay(step))
        #expect(told == 1, "the host hears of the replayed change as of any other")
        #expect(!follow(control, .saved(bobby), step), "a list with other storage computes its own")

        #expect(first.state.users == [bobby, ada, cleo])
        #expect(second.state == first.state)
        #expect(control.state == first.state, "computed on its own, the same outcome")
        #expect(Self.sharesRows(first, second), "the second took the first's rows")

        // Shared again for the next change: still the same value as computing it.
        let removal = first.apply(.removed(id: ada.id))
        #expect(second.replay(removal))
        control.apply(.removed(id: ada.id))
        #expect(second.state == control.state)
        #expect(Self.sharesRows(first, second))
    }

    /// An add that grows the list past its page is cut back to the page, which also moves the
    /// list's cursor: a list in the same state at the same capacity takes both; one that keeps
    /// more rows refuses the cut.
    @Test func aCutStepCarriesItsCursor() async {
        let (store, repository) = Self.storeMakingCursors()
        func loadedPage(_ repository: any UserRepository, size: Int = 2) async -> UserListViewModel {
            await loadedList(repository, pageSize: size)
        }
        let first = await loadedPage(repository)
        let second = await loadedPage(repository)
        let control = await loadedPage(store)  // its own storage: computes its own
        let aaron = user(100, "Aaron Added")
        store.put(aaron)

        let step = first.apply(.added(aaron), markingStale: true)
        #expect(second.replay(step))
        follow(control, .added(aaron), step)
        #expect(first.state.users == [aaron, ada], "cut back to its page")
        #expect(second.state == control.state)
        #expect(Self.sharesRows(first, second), "the second took the first's cut rows")

        // The cursor came along: the next page goes on after Ada, as the control's does.
        _ = await second.didDisplayRow(at: 1).value
        _ = await control.didDisplayRow(at: 1).value
        #expect(second.state.users == [aaron, ada, bob, cleo])
        #expect(second.state == control.state)
    }

    /// A list whose load is in flight must see the change itself (its load replays it on the
    /// page it brings), even in the very state the step started from.
    @Test func aListWithALoadInFlightRefusesAStep() async {
        let (store, repository) = Self.storeMakingCursors()
        let first = await loadedList(repository, pageSize: 2)
        let reloading = await loadedList(repository, pageSize: 2)
        let aaron = user(100, "Aaron Added")
        store.put(aaron)
        let step = first.apply(.added(aaron), markingStale: true)

        #expect(reloading.state.isIdentical(to: step.before))
        let reload = reloading.resync()  // quiet: the state shows no indicator
        #expect(reloading.state.isIdentical(to: step.before))
        #expect(!reloading.replay(step), "refused while its load runs")
        reloading.apply(.added(aaron), markingStale: true)
        _ = await reload.value
        #expect(reloading.state.users.first == aaron, "the change reached the reloaded rows")
    }

    @Test func listsThatDifferComputeTheirOwn() async {
        let repository = PageSharingRepository(FakeUserRepository([ada, bob, cleo]))
        let everyone = await loadedList(repository)
        let searching = await loadedList(repository, search: "b")
        var cleopatra = cleo
        cleopatra.name = "Bea Cleopatra"  // now matches "b"
        cleopatra.version = 2

        let step = everyone.apply(.saved(cleopatra), markingStale: true)
        #expect(!follow(searching, .saved(cleopatra), step))
        #expect(everyone.state.users == [ada, cleopatra, bob])
        #expect(searching.state.users.map(\.id) == [cleopatra.id, bob.id])
    }
}
