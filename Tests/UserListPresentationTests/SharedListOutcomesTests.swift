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
    }

    private func loadedList(_ repository: any UserRepository, search: String? = nil) async -> UserListViewModel {
        let list = UserListViewModel(useCases: UserUseCases(repository: repository))
        if let search {
            _ = await list.search(search).value
        } else {
            _ = await list.onAppear().value
        }
        return list
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
