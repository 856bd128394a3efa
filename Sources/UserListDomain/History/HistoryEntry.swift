import Foundation

/// The fields a history entry shows before and after a change.
public struct UserFields: Equatable, Hashable, Sendable, Codable {
    public var name: String
    public var email: String
    public var avatarURL: String?

    public init(name: String, email: String, avatarURL: String? = nil) {
        self.name = name
        self.email = email
        self.avatarURL = avatarURL
    }

    public init(_ user: User) { self.init(name: user.name, email: user.email, avatarURL: user.avatarURL) }
}

/// What a change did to a user.
public enum HistoryKind: String, Equatable, Hashable, Sendable, Codable, CaseIterable {
    case added, saved, removed
}

/// One recorded change: who, when, how, and the fields before and after. Entries are numbered
/// by the store in commit order; the number is what `revert` takes.
public struct HistoryEntry: Equatable, Hashable, Sendable, Identifiable, Codable {
    public let id: Int64
    public var at: Date
    public var userID: UUID
    public var kind: HistoryKind
    public var author: ChangeAuthor
    /// nil for `added`.
    public var before: UserFields?
    /// nil for `removed`.
    public var after: UserFields?
    /// The user's version after the change (nil for `removed`): a revert applies only to a user
    /// still at this version.
    public var versionAfter: Int?

    public init(id: Int64, at: Date, userID: UUID, kind: HistoryKind, author: ChangeAuthor,
                before: UserFields?, after: UserFields?, versionAfter: Int?) {
        self.id = id
        self.at = at
        self.userID = userID
        self.kind = kind
        self.author = author
        self.before = before
        self.after = after
        self.versionAfter = versionAfter
    }

    /// How the change arrived, as `daemon` sees it: a change another daemon wrote is
    /// `.anotherDaemon`, whatever way it reached that daemon.
    public func via(seenFrom daemon: String?) -> ChangeVia {
        if let daemon, let writer = author.daemon, writer != daemon { return .anotherDaemon }
        return author.via
    }
}

/// Which entries to list, newest first: one user's or everyone's, optionally by one actor and
/// since a time, continuing below `before` (the previous page's `next`).
public struct HistoryQuery: Equatable, Hashable, Sendable {
    public var userID: UUID?
    public var actorUID: UInt32?
    public var since: Date?
    /// Keyset position: entries with a smaller id than this.
    public var before: Int64?
    /// Only entries newer than this (what a screen showing the history has not seen yet).
    public var after: Int64?
    public var limit: Int

    public init(userID: UUID? = nil, actorUID: UInt32? = nil, since: Date? = nil, before: Int64? = nil,
                after: Int64? = nil, limit: Int = 50) {
        self.userID = userID
        self.actorUID = actorUID
        self.since = since
        self.before = before
        self.after = after
        self.limit = limit
    }
}

/// A page of entries, newest first.
public struct HistoryPage: Equatable, Sendable {
    public var entries: [HistoryEntry]
    /// Where the next (older) page starts; nil on the last page.
    public var next: Int64?

    public init(entries: [HistoryEntry], next: Int64?) {
        self.entries = entries
        self.next = next
    }
}
