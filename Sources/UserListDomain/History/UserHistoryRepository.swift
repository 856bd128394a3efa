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
}
