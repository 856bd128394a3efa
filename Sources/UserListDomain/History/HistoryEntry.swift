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

/// What a change did to a user; `imported` is a whole import (or the undo of one): one entry
/// for every user it wrote, each user's part kept with it (`HistoryEntry.partOf`).
public enum HistoryKind: String, Equatable, Hashable, Sendable, Codable, CaseIterable {
    case added, saved, removed, imported
}

/// One recorded change: who, when, how, and the fields before and after. Entries are numbered
/// by the store in commit order; the number is what `revert` takes.
///
/// An import is one entry (`kind == .imported`, no `userID`, its counts in `batch`). Read as one
/// user's history, it shows as that user's part: the import's number, the user's own kind and
/// fields before and after, and `partOf` set.
public struct HistoryEntry: Equatable, Hashable, Sendable, Identifiable, Codable {
    public let id: Int64
    public var at: Date
    /// nil for a whole import (`.imported`).
    public var userID: UUID?
    public var kind: HistoryKind
    public var author: ChangeAuthor
    /// nil for `added`.
    public var before: UserFields?
    /// nil for `removed`.
    public var after: UserFields?
    /// The user's version after the change (nil for `removed`): a revert applies only to a user
    /// still at this version.
    public var versionAfter: Int?
    /// A whole import's counts (`.imported` only).
    public var batch: BatchSummary?
    /// One user's part of an import (or of its undo): the entry is that import's, `id`.
    public var partOf: Bool

    public init(id: Int64, at: Date, userID: UUID?, kind: HistoryKind, author: ChangeAuthor,
                before: UserFields?, after: UserFields?, versionAfter: Int?,
                batch: BatchSummary? = nil, partOf: Bool = false) {
        self.id = id
        self.at = at
        self.userID = userID
        self.kind = kind
        self.author = author
        self.before = before
        self.after = after
        self.versionAfter = versionAfter
        self.batch = batch
        self.partOf = partOf
    }

    private enum CodingKeys: String, CodingKey {
        case id, at, userID, kind, author, before, after, versionAfter, batch, partOf
    }

    /// Decodes entries saved before imports were one entry too (a session journal written by an
    /// older daemon has no `partOf`).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try c.decode(Int64.self, forKey: .id), at: try c.decode(Date.self, forKey: .at),
                  userID: try c.decodeIfPresent(UUID.self, forKey: .userID),
                  kind: try c.decode(HistoryKind.self, forKey: .kind),
                  author: try c.decode(ChangeAuthor.self, forKey: .author),
                  before: try c.decodeIfPresent(UserFields.self, forKey: .before),
                  after: try c.decodeIfPresent(UserFields.self, forKey: .after),
                  versionAfter: try c.decodeIfPresent(Int.self, forKey: .versionAfter),
                  batch: try c.decodeIfPresent(BatchSummary.self, forKey: .batch),
                  partOf: try c.decodeIfPresent(Bool.self, forKey: .partOf) ?? false)
    }

    /// How the change arrived, as `daemon` sees it: a change another daemon wrote is
    /// `.anotherDaemon`, whatever way it reached that daemon.
    public func via(seenFrom daemon: String?) -> ChangeVia {
        if let daemon, let writer = author.daemon, writer != daemon { return .anotherDaemon }
        return author.via
    }
}

/// What a whole import did, counted: the users it added, updated and (for the undo of an
/// import) removed, and where it came from as the person named it (a file's name, "stdin").
public struct BatchSummary: Equatable, Hashable, Sendable, Codable {
    public var source: String?
    public var added: Int
    public var updated: Int
    public var removed: Int

    public init(source: String?, added: Int, updated: Int, removed: Int = 0) {
        self.source = source
        self.added = added
        self.updated = updated
        self.removed = removed
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
    /// Only entries of this kind (`.imported`: imports, and a user's parts of them).
    public var kind: HistoryKind?
    /// Only entries that came this way, as `seenFrom` sees them (`HistoryEntry.via(seenFrom:)`):
    /// `.anotherDaemon` is every entry another daemon wrote, the others this daemon's.
    public var via: ChangeVia?
    public var seenFrom: String?

    public init(userID: UUID? = nil, actorUID: UInt32? = nil, since: Date? = nil, before: Int64? = nil,
                after: Int64? = nil, limit: Int = 50, kind: HistoryKind? = nil, via: ChangeVia? = nil,
                seenFrom: String? = nil) {
        self.userID = userID
        self.actorUID = actorUID
        self.since = since
        self.before = before
        self.after = after
        self.limit = limit
        self.kind = kind
        self.via = via
        self.seenFrom = seenFrom
    }
}

/// A page of entries, newest first.
public struct HistoryPage: Equatable, Sendable {
    public var entries: [HistoryEntry]
    /// Where the next (older) page starts; nil on the last page.
    public var next: Int64?
    /// How many entries match below this page, when asked for (`HistoryQuery` via the use
    /// case's `counting`); nil otherwise.
    public var more: Int?

    public init(entries: [HistoryEntry], next: Int64?, more: Int? = nil) {
        self.entries = entries
        self.next = next
        self.more = more
    }
}
