import Foundation
import Synchronization
import UserListDomain
import ThreadLocks

/// Lets every session that asks for the same page get the same page value, so thousands of
/// sessions showing the first page hold one copy of its rows instead of one each, and only the
/// first of them pays for the query.
///
/// - A page is kept until any write: writes through this repository clear the cache before they
///   return, and `invalidate()` (wired to the change feed) clears it for writes made elsewhere.
///   A page fetched in the moment between another process's commit and the feed's notice is
///   corrected by that notice, which every session applies to its rows anyway.
/// - Bounded: at most `capacity` pages (the first pages of common searches, mostly).
/// - Stale pages (from a cache whose upstream is down) are never kept.
public final class SharedPageRepository: UserRepository {
    public let base: any UserRepository
    private let capacity: Int
    private let pages = Lock<[PageRequest: UserPage]>([:])
    /// Bumped by every invalidation, so a fetch that started before one does not store its page.
    private let generation = Atomic<Int>(0)

    public init(base: any UserRepository, capacity: Int = 64) {
        self.base = base
        self.capacity = capacity
    }

    /// Forgets every page: something was written.
    public func invalidate() {
        generation.add(1, ordering: .sequentiallyConsistent)
        pages.withLock { $0.removeAll(keepingCapacity: true) }
    }

    public func fetchPage(_ request: PageRequest) async throws(UserError) -> UserPage {
        if let page = pages.withLock({ $0[request] }) { return page }
        let started = generation.load(ordering: .sequentiallyConsistent)
        let page = try await base.fetchPage(request)
        if !page.isStale {
            pages.withLock { pages in
                guard generation.load(ordering: .sequentiallyConsistent) == started else { return }
                if pages.count >= capacity { pages.removeAll(keepingCapacity: true) }
                pages[request] = page
            }
        }
        return page
    }

    /// A store that reads export pages itself (`readsExportPages`: PostgreSQL and SQLite) gets
    /// them uncached: an export's pages (up to 10,000 users each, read once) would push out the
    /// screens' pages this cache is for, and hold the whole store in memory until the next write.
    /// Any other store's export pages are its `fetchPage`, shared here as they always were.
    public func exportPage(_ request: PageRequest, byteBudget: Int) async throws(UserError) -> UserPage {
        guard base.readsExportPages else { return try await fetchPage(request) }
        return try await base.exportPage(request, byteBudget: byteBudget)
    }

    public var readsExportPages: Bool { base.readsExportPages }

    /// Not shared: a list's end is asked for by one person pressing a key, not by every session.
    public func fetchPage(_ request: BackwardPageRequest) async throws(UserError) -> UserPage {
        try await base.fetchPage(request)
    }

    public func cursor(after user: User, totalCount: Int?) -> PageCursor? {
        base.cursor(after: user, totalCount: totalCount)
    }

    public func fetchUser(id: UUID) async throws(UserError) -> User {
        try await base.fetchUser(id: id)
    }

    public func users(withIDPrefix prefix: UserIDPrefix, limit: Int) async throws(UserError) -> [User] {
        try await base.users(withIDPrefix: prefix, limit: limit)
    }

    public func update(_ user: User) async throws(UserError) -> User {
        defer { invalidate() }
        return try await base.update(user)
    }

    public func add(_ user: NewUser) async throws(UserError) -> User {
        defer { invalidate() }
        return try await base.add(user)
    }

    public func remove(id: UUID) async throws(UserError) {
        defer { invalidate() }
        try await base.remove(id: id)
    }

    public var importStaging: (any ImportStaging)? { base.importStaging }

    public func importUsers(_ users: [User]) async throws(UserError) -> Int {
        defer { invalidate() }
        return try await base.importUsers(users)
    }

    // The authored writes reach the base with their author (the protocol's defaults would drop it).

    public func update(_ user: User, by author: ChangeAuthor) async throws(UserError) -> User {
        defer { invalidate() }
        return try await base.update(user, by: author)
    }

    public func add(_ user: NewUser, by author: ChangeAuthor) async throws(UserError) -> User {
        defer { invalidate() }
        return try await base.add(user, by: author)
    }

    public func remove(id: UUID, by author: ChangeAuthor) async throws(UserError) {
        defer { invalidate() }
        try await base.remove(id: id, by: author)
    }

    public func importUsers(_ users: [User], by author: ChangeAuthor) async throws(UserError) -> Int {
        defer { invalidate() }
        return try await base.importUsers(users, by: author)
    }
}
