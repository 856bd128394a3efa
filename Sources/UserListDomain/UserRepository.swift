import Foundation

/// The contract between the Domain and whatever stores users (SQLite, an HTTP service, a cache).
///
/// Every method throws `UserError` only, so callers can show a person a message without knowing
/// which store is behind it.
public protocol UserRepository: Sendable {
    func fetchPage(_ request: PageRequest) async throws(UserError) -> UserPage
    /// The users right before `request.before`, or the list's last users: still in list order,
    /// with `previous` set while users come before them. Lets a list jump to its end in one
    /// read. The default declines with `.unavailable` (a store that can only read forward).
    func fetchPage(_ request: BackwardPageRequest) async throws(UserError) -> UserPage
    /// One page of an export (`export_page`): the users after `request.after` in list order, at
    /// most `request.limit`, with `next` when more follow, like `fetchPage`; but the store may
    /// end the page early, before the first user that would take it past `byteBudget` (each
    /// user counted as `UserExportSize.lowerBound`, never more than its JSON; at least one
    /// user), since the caller cuts the page there anyway. Not a page a screen shows: wrappers that share or cache
    /// screens' pages pass it through. The default is `fetchPage(request)`.
    func exportPage(_ request: PageRequest, byteBudget: Int) async throws(UserError) -> UserPage
    /// Whether `exportPage` is the store's own read (PostgreSQL: a COPY a page, read ahead;
    /// SQLite: a keyset page ended at the byte budget), which wrappers pass through uncached;
    /// false (the default) for a store whose export pages are its `fetchPage`, which a page
    /// cache then keeps like a screen's, as before there was a choice.
    var readsExportPages: Bool { get }
    func fetchUser(id: UUID) async throws(UserError) -> User
    /// Commits `user` if the stored version is still `user.version`; returns the stored result
    /// (with the next version). Otherwise throws `.conflict` carrying the stored user.
    func update(_ user: User) async throws(UserError) -> User
    func add(_ user: NewUser) async throws(UserError) -> User
    func remove(id: UUID) async throws(UserError)
    /// Inserts or replaces users by id, all or nothing; returns how many were written.
    /// Stores that can do it in one transaction should; the default goes one by one.
    func importUsers(_ users: [User]) async throws(UserError) -> Int
    /// A cursor that continues right after `user` in list order (carrying `totalCount` for a
    /// search), so a list that drops rows it no longer holds (a burst of changes past its
    /// loaded pages) can load them again later. `nil` when the store cannot make one: the
    /// default, and then lists keep every row a change brings.
    func cursor(after user: User, totalCount: Int?) -> PageCursor?
    /// The users whose id starts with `prefix`, in id order, at most `limit`: lets a person name
    /// a user by the start of the id (`userctl show 4f1c`). The default declines with
    /// `.unavailable` (a store that cannot read ids by range; the whole id still works).
    func users(withIDPrefix prefix: UserIDPrefix, limit: Int) async throws(UserError) -> [User]

    // Writes that say who made them: stores that keep history record `author` in the same
    // transaction. The defaults forward to the plain writes (a store that keeps no history, the
    // HTTP source); a store that wraps another must forward the author itself.
    func update(_ user: User, by author: ChangeAuthor) async throws(UserError) -> User
    func add(_ user: NewUser, by author: ChangeAuthor) async throws(UserError) -> User
    func remove(id: UUID, by author: ChangeAuthor) async throws(UserError)
    func importUsers(_ users: [User], by author: ChangeAuthor) async throws(UserError) -> Int

    /// The store's own staging of all-or-nothing imports (durable, applied in one merge), or nil
    /// (the default): the use case then stages in memory and calls `importUsers` at the commit.
    var importStaging: (any ImportStaging)? { get }
}

extension UserRepository {
    public func update(_ user: User, by author: ChangeAuthor) async throws(UserError) -> User { try await update(user) }
    public func add(_ user: NewUser, by author: ChangeAuthor) async throws(UserError) -> User { try await add(user) }
    public func remove(id: UUID, by author: ChangeAuthor) async throws(UserError) { try await remove(id: id) }
    public func importUsers(_ users: [User], by author: ChangeAuthor) async throws(UserError) -> Int {
        try await importUsers(users)
    }

    public func cursor(after user: User, totalCount: Int?) -> PageCursor? { nil }

    public func exportPage(_ request: PageRequest, byteBudget: Int) async throws(UserError) -> UserPage {
        try await fetchPage(request)
    }

    public var readsExportPages: Bool { false }

    public var importStaging: (any ImportStaging)? { nil }

    public func users(withIDPrefix prefix: UserIDPrefix, limit: Int) async throws(UserError) -> [User] {
        throw .unavailable(reason: "this store cannot look users up by the start of their id; give the whole id")
    }

    public func fetchPage(_ request: BackwardPageRequest) async throws(UserError) -> UserPage {
        throw .unavailable(reason: "this store lists users from the first one only; scroll down to reach the end")
    }

    public func importUsers(_ users: [User]) async throws(UserError) -> Int {
        for user in users {
            do throws(UserError) {
                var current = try await fetchUser(id: user.id)
                current.name = user.name
                current.email = user.email
                current.avatarURL = user.avatarURL
                _ = try await update(current)
            } catch .notFound {
                _ = try await add(NewUser(id: user.id, name: user.name, email: user.email, avatarURL: user.avatarURL))
            }
        }
        return users.count
    }
}
