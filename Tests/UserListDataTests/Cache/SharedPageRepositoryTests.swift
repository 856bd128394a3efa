import Foundation
import Synchronization
import Testing
import UserListData
import UserListDomain

/// Counts the pages it serves, so a test can tell a shared page from a fresh query.
private final class CountingRepository: UserRepository {
    let queries = Atomic<Int>(0)
    let stale: Bool
    let readsExportPages: Bool
    init(stale: Bool = false, readsExportPages: Bool = false) {
        self.stale = stale
        self.readsExportPages = readsExportPages
    }

    func fetchPage(_ request: PageRequest) async throws(UserError) -> UserPage {
        let n = queries.add(1, ordering: .relaxed).newValue
        return UserPage(users: [User(id: UUID(), name: "Query \(n)", email: "q\(n)@example.com")], next: nil, isStale: stale)
    }
    func exportPage(_ request: PageRequest, byteBudget: Int) async throws(UserError) -> UserPage {
        try await fetchPage(request)
    }
    func fetchUser(id: UUID) async throws(UserError) -> User { throw .notFound(id: id) }
    func update(_ user: User) async throws(UserError) -> User { user }
    func add(_ user: NewUser) async throws(UserError) -> User { User(id: user.id, name: user.name, email: user.email) }
    func remove(id: UUID) async throws(UserError) {}
}

@Test func sessionsAskingForTheSamePageShareOneQuery() async throws {
    let base = CountingRepository()
    let shared = SharedPageRepository(base: base)
    let first = try await shared.fetchPage(PageRequest(limit: 50))
    let second = try await shared.fetchPage(PageRequest(limit: 50))
    #expect(first == second)
    #expect(base.queries.load(ordering: .relaxed) == 1)
    _ = try await shared.fetchPage(PageRequest(limit: 50, search: "ad"))
    #expect(base.queries.load(ordering: .relaxed) == 2, "another request is another page")
}

/// A store that reads its own export pages (PostgreSQL) gets them uncached: they are read once
/// and big, and are not kept (nor do they push out the screens' pages).
@Test func exportPagesAreReadThroughAndNotKept() async throws {
    let base = CountingRepository(readsExportPages: true)
    let shared = SharedPageRepository(base: base)
    let screen = try await shared.fetchPage(PageRequest(limit: 50))
    _ = try await shared.exportPage(PageRequest(limit: 10_000), byteBudget: 1 << 20)
    _ = try await shared.exportPage(PageRequest(limit: 10_000), byteBudget: 1 << 20)
    #expect(base.queries.load(ordering: .relaxed) == 3)
    _ = try await shared.fetchPage(PageRequest(limit: 10_000))
    #expect(base.queries.load(ordering: .relaxed) == 4, "an export's page is not one a screen's read finds")
    #expect(try await shared.fetchPage(PageRequest(limit: 50)) == screen)
}

/// Any other store's export pages are its screen pages, shared as before.
@Test func otherStoresExportPagesAreSharedPages() async throws {
    let base = CountingRepository()
    let shared = SharedPageRepository(base: base)
    let first = try await shared.exportPage(PageRequest(limit: 10_000), byteBudget: 1 << 20)
    #expect(try await shared.fetchPage(PageRequest(limit: 10_000)) == first)
    #expect(try await shared.exportPage(PageRequest(limit: 10_000), byteBudget: 1 << 20) == first)
    #expect(base.queries.load(ordering: .relaxed) == 1)
}

@Test func anyWriteOrInvalidationForgetsThePages() async throws {
    let base = CountingRepository()
    let shared = SharedPageRepository(base: base)
    let before = try await shared.fetchPage(PageRequest())
    _ = try await shared.update(before.users[0])
    let after = try await shared.fetchPage(PageRequest())
    #expect(after != before)
    shared.invalidate()
    _ = try await shared.fetchPage(PageRequest())
    #expect(base.queries.load(ordering: .relaxed) == 3)
}

@Test func stalePagesAreNeverShared() async throws {
    let base = CountingRepository(stale: true)
    let shared = SharedPageRepository(base: base)
    _ = try await shared.fetchPage(PageRequest())
    _ = try await shared.fetchPage(PageRequest())
    #expect(base.queries.load(ordering: .relaxed) == 2)
}
