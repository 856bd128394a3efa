/// Where a listing continues. Opaque to everyone but the repository that made it: the SQLite
/// store puts a keyset position in it, the HTTP source a page number.
public struct PageCursor: Hashable, Sendable, Codable {
    public let token: String
    public init(token: String) { self.token = token }
}

/// What to list: from the start (`after == nil`) or after a cursor, optionally filtered by a
/// substring of the name or the email, case-, accent- and width-insensitive (`TextKey.matches`).
public struct PageRequest: Hashable, Sendable {
    public var after: PageCursor?
    public var limit: Int
    public var search: String?

    public init(after: PageCursor? = nil, limit: Int = 50, search: String? = nil) {
        self.after = after
        self.limit = limit
        self.search = search
    }
}

/// What to list backward: the `limit` users right before `before` (a page's `previous`), or the
/// list's last `limit` users when `before` is nil, with the same filter as `PageRequest.search`.
/// This is how a list shows its end ("G") without walking every page to get there.
public struct BackwardPageRequest: Hashable, Sendable {
    public var before: PageCursor?
    public var limit: Int
    public var search: String?

    public init(before: PageCursor? = nil, limit: Int = 50, search: String? = nil) {
        self.before = before
        self.limit = limit
        self.search = search
    }
}

/// One page of users, in the repository's stable order (name, then id).
public struct UserPage: Equatable, Sendable {
    public var users: [User]
    /// `nil` on the last page. Not set on a backward page: its caller holds what follows it.
    public var next: PageCursor?
    /// Where a backward listing continues (the users right before this page); `nil` when the
    /// page holds the first user, and always on forward pages (they are read from the top).
    public var previous: PageCursor?
    /// How many users match the request in all, when the source knows.
    public var totalCount: Int?
    /// True when the page came from a cache because the source of truth could not be reached.
    public var isStale: Bool

    public init(users: [User], next: PageCursor?, previous: PageCursor? = nil, totalCount: Int? = nil,
                isStale: Bool = false) {
        self.users = users
        self.next = next
        self.previous = previous
        self.totalCount = totalCount
        self.isStale = isStale
    }

    public var hasMore: Bool { next != nil }
    public var hasPrevious: Bool { previous != nil }
}
