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

/// One page of users, in the repository's stable order (name, then id).
public struct UserPage: Equatable, Sendable {
    public var users: [User]
    /// `nil` on the last page.
    public var next: PageCursor?
    /// How many users match the request in all, when the source knows.
    public var totalCount: Int?
    /// True when the page came from a cache because the source of truth could not be reached.
    public var isStale: Bool

    public init(users: [User], next: PageCursor?, totalCount: Int? = nil, isStale: Bool = false) {
        self.users = users
        self.next = next
        self.totalCount = totalCount
        self.isStale = isStale
    }

    public var hasMore: Bool { next != nil }
}
