import Foundation
import UserListDomain

/// An upstream repository (typically `RemoteUserRepository`) with a SQLite cache in front of its
/// failures: what upstream sends is written into the cache; when upstream is unavailable,
/// pages come from the cache marked `isStale`, and single users likewise.
///
/// - Writes go through: upstream first, then the cache. An upstream failure is the caller's
///   error and leaves the cache unchanged. Authoritative answers do update the cache: a
///   `.conflict` stores the user it carries, a `.notFound` removes the user from the cache.
///   A cache write that fails after upstream succeeded is ignored: the change is made where it
///   counts, and the cache catches up on the next fetch.
/// - Cursors carry both positions: upstream's token and the cache's keyset position after the
///   same last user (both order by name, then id). A listing that loses upstream half-way
///   continues from the cache where it was; once on a cache cursor it stays on the cache (a
///   keyset position cannot become a page number) until the list is reloaded from the top.
/// - Only `.unavailable` falls back to the cache; other errors (validation, not found,
///   forbidden) are upstream's answer and are passed on.
public final class CachedUserRepository: UserRepository {
    public let upstream: any UserRepository
    public let cache: SQLiteUserRepository

    public init(upstream: any UserRepository, cache: SQLiteUserRepository) {
        self.upstream = upstream
        self.cache = cache
    }

    public func fetchPage(_ request: PageRequest) async throws(UserError) -> UserPage {
        try await readPage(from: request.after, backward: false, limit: request.limit, search: request.search)
    }

    /// As `fetchPage(_: PageRequest)`, read backward: the cursor pairs upstream's `previous`
    /// with the cache's keyset position before the page's first user.
    public func fetchPage(_ request: BackwardPageRequest) async throws(UserError) -> UserPage {
        try await readPage(from: request.before, backward: true, limit: request.limit, search: request.search)
    }

    /// One page after `cursor` (or before it, `backward`): from upstream while the listing is
    /// upstream's, else (or when upstream is unavailable) from the cache, marked stale.
    private func readPage(from pageCursor: PageCursor?, backward: Bool, limit: Int,
                          search: String?) async throws(UserError) -> UserPage {
        let cursor: CachedCursor?
        if let pageCursor {
            guard let decoded = CachedCursor(pageCursor) else {
                throw .unavailable(reason: "the page cursor is not one the cached store made")
            }
            cursor = decoded
        } else {
            cursor = nil
        }
        func fetch(_ store: any UserRepository, _ token: String?) async throws(UserError) -> UserPage {
            let position = token.map(PageCursor.init)
            return backward
                ? try await store.fetchPage(BackwardPageRequest(before: position, limit: limit, search: search))
                : try await store.fetchPage(PageRequest(after: position, limit: limit, search: search))
        }
        /// The page with `onward` as its cursor in the direction read.
        func page(_ users: [User], onward: PageCursor?, _ total: Int?, stale: Bool) -> UserPage {
            backward
                ? UserPage(users: users, next: nil, previous: onward, totalCount: total, isStale: stale)
                : UserPage(users: users, next: onward, totalCount: total, isStale: stale)
        }

        var upstreamError: UserError?
        if cursor == nil || cursor?.upstream != nil {
            do {
                let fetched = try await fetch(upstream, cursor?.upstream)
                _ = try? await cache.importUsers(fetched.users)
                let edge = backward ? fetched.users.first : fetched.users.last
                let cachePosition = edge.map {
                    KeysetCursor(nameKey: UserKey.fold($0.name), id: $0.id.uuidString, total: nil).pageCursor.token
                }
                let onward = backward ? fetched.previous : fetched.next
                let cursor = onward.map { CachedCursor(upstream: $0.token, cache: cachePosition).pageCursor }
                return page(fetched.users, onward: cursor, fetched.totalCount, stale: false)
            } catch .unavailable(let reason) {
                upstreamError = .unavailable(reason: reason)
            }
        }

        let cached = try await fetch(cache, cursor?.cache)
        // Nothing cached for the top of the list: the cache has nothing to offer; say why.
        if let upstreamError, cached.users.isEmpty, cursor == nil { throw upstreamError }
        let onward = backward ? cached.previous : cached.next
        return page(cached.users, onward: onward.map { CachedCursor(upstream: nil, cache: $0.token).pageCursor },
                    cached.totalCount, stale: true)
    }

    /// Upstream's answer; the cache's (possibly behind) only when upstream is unavailable, or
    /// cannot look ids up by prefix at all (a REST service).
    public func users(withIDPrefix prefix: UserIDPrefix, limit: Int) async throws(UserError) -> [User] {
        do {
            return try await upstream.users(withIDPrefix: prefix, limit: limit)
        } catch .unavailable(let reason) {
            do {
                return try await cache.users(withIDPrefix: prefix, limit: limit)
            } catch {
                throw .unavailable(reason: reason)
            }
        }
    }

    public func fetchUser(id: UUID) async throws(UserError) -> User {
        do {
            let user = try await upstream.fetchUser(id: id)
            _ = try? await cache.importUsers([user])
            return user
        } catch .unavailable(let reason) {
            do { return try await cache.fetchUser(id: id) } catch { throw .unavailable(reason: reason) }
        } catch .notFound(let id) {
            try? await cache.removeIfPresent(id: id)
            throw .notFound(id: id)
        }
    }

    public func update(_ user: User) async throws(UserError) -> User {
        do {
            let saved = try await upstream.update(user)
            _ = try? await cache.importUsers([saved])
            return saved
        } catch {
            try await reconcile(after: error)
        }
    }

    public func add(_ user: NewUser) async throws(UserError) -> User {
        do {
            let added = try await upstream.add(user)
            _ = try? await cache.importUsers([added])
            return added
        } catch {
            try await reconcile(after: error)
        }
    }

    public func remove(id: UUID) async throws(UserError) {
        do {
            try await upstream.remove(id: id)
            try? await cache.removeIfPresent(id: id)
        } catch {
            try await reconcile(after: error)
        }
    }

    /// Lets the cache learn from upstream's authoritative refusals, then rethrows.
    private func reconcile(after error: UserError) async throws(UserError) -> Never {
        switch error {
        case .conflict(let stored): _ = try? await cache.importUsers([stored])
        case .notFound(let id): try? await cache.removeIfPresent(id: id)
        default: break
        }
        throw error
    }
}

/// Both positions of a cached listing (see `CachedUserRepository`), as base64url JSON.
struct CachedCursor: Codable, Equatable {
    var upstream: String?
    var cache: String?

    init(upstream: String?, cache: String?) {
        self.upstream = upstream
        self.cache = cache
    }

    init?(_ cursor: PageCursor) {
        guard let data = Base64URL.decode(cursor.token),
              let decoded = try? JSONDecoder().decode(CachedCursor.self, from: data) else { return nil }
        self = decoded
    }

    var pageCursor: PageCursor {
        PageCursor(token: Base64URL.encode((try? JSONEncoder().encode(self)) ?? Data()))
    }
}
