import Foundation

/// The record of who changed which user, kept by stores that record it (SQLite, PostgreSQL)
/// in the same transaction as each change.
public protocol UserHistoryRepository: Sendable {
    /// Entries matching `query`, newest first, a keyset page at a time.
    func history(_ query: HistoryQuery) async throws(UserError) -> HistoryPage
    /// One entry by number; `.unavailable` naming it when there is none (never recorded, or
    /// pruned).
    func historyEntry(_ id: Int64) async throws(UserError) -> HistoryEntry
    /// Deletes entries recorded before `cutoff`; returns how many. Retention, not the change
    /// feed's log, decides what history remains.
    func pruneHistory(before cutoff: Date) async throws(UserError) -> Int
    /// How many entries match `query` (its `before` and `limit` aside) below entry `below`: the
    /// "N more" after a page.
    func historyCount(_ query: HistoryQuery, below entry: Int64) async throws(UserError) -> Int
    /// Undoes import `entry` in one transaction, all or nothing: the users it added are removed,
    /// the users it updated get their fields from before it back. A user changed since the
    /// import refuses the whole undo (`.changedSinceImport`, naming them) unless
    /// `skippingChanged`, which leaves them as they are. Recorded as one entry of its own.
    func revertImport(_ entry: Int64, skippingChanged: Bool,
                      by author: ChangeAuthor) async throws(UserError) -> ImportUndo
}

/// What undoing an import did: its own entry's number, and the users it left as they were.
public struct ImportUndo: Equatable, Sendable {
    /// The undo's entry (nil: it had nothing to undo, every user being skipped).
    public var entry: Int64?
    public var removed: Int
    public var restored: Int
    /// Users changed since the import, left as they are (`skippingChanged`).
    public var skipped: [UUID]

    public init(entry: Int64?, removed: Int, restored: Int, skipped: [UUID]) {
        self.entry = entry
        self.removed = removed
        self.restored = restored
        self.skipped = skipped
    }
}

extension UserHistoryRepository {
    public func historyCount(_ query: HistoryQuery, below entry: Int64) async throws(UserError) -> Int {
        var rest = query
        rest.before = entry
        rest.limit = 1_000
        return try await history(rest).entries.count
    }

    public func revertImport(_ entry: Int64, skippingChanged: Bool,
                             by author: ChangeAuthor) async throws(UserError) -> ImportUndo {
        throw .unavailable(reason: "this store cannot undo an import")
    }
}
