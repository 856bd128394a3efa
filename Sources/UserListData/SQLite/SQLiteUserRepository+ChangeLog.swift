import CSQLite
import Foundation
import Synchronization
import UserListDomain
import ThreadLocks

/// What a commit tells the change feed, the change log's pruning, and the views the benchmark
/// and the tests take.
extension SQLiteUserRepository {
    /// What a commit of this instance changed, as its commit observers hear it.
    enum CommitNotice: Sendable {
        /// One change, logged as row `seq`.
        case change(UserChange, seq: Int)
        /// Several (an import), each with its `seq`, in order.
        case changes([(change: UserChange, seq: Int)])
        /// Many (a big import): the log has them.
        case readTheLog
    }

    /// Called after every commit of this instance that changed users, on the writer queue
    /// before the next write: the change feed's direct path, so in-process changes are never
    /// read back from the file. The observer must not block.
    func onCommit(_ observer: @escaping @Sendable (CommitNotice) -> Void) {
        commitObservers.withLock { $0.append(observer) }
    }

    /// Called on the writer queue when one of this instance's write transactions takes the
    /// write lock (true) and when it ends (false). While the lock is held, every write to the
    /// file is this instance's own, which its change feed hears from `onCommit`.
    func onWriteLock(_ observer: @escaping @Sendable (Bool) -> Void) {
        writeLockObservers.withLock { $0.append(observer) }
    }

    /// Tells a writer's receipt where its commit was logged (on the writer queue, right after
    /// the commit and before the feed hears of it). The log's newest row is the commit's last.
    static func record(_ notice: CommitNotice, on receipt: CommitReceipt, _ connection: SQLiteConnection) {
        switch notice {
        case .change(_, let seq): receipt.record(seq)
        case .changes(let changes): for (_, seq) in changes { receipt.record(seq) }
        case .readTheLog:
            receipt.record((try? connection.integer("SELECT MAX(seq) FROM changes", "reading the change log")) ?? 0)
        }
    }

    func notifyCommitted(_ notice: CommitNotice) {
        for observer in commitObservers.withLock({ $0 }) { observer(notice) }
    }

    static let normalCacheKiB = 16 * 1024
    static let importCacheKiB = 256 * 1024
    /// The writer's page cache while a staged import is merged: the name and address indexes
    /// it updates at random stay in memory (300,000 entries into 100,000 took about a fifth
    /// less time than with the normal 16 MiB; the daemon's peak RSS 120 MiB, with the writer on
    /// one thread; BENCHMARKS.md, "Where the time goes").
    static let mergeCacheKiB = 64 * 1024
    static let rebuildIndexesFrom = 50_000

    static let pruneEvery = 500
    static let importPruneSeconds = 5
    /// The change log keeps at least this many rows...
    static let changesKept = 10_000
    /// ...and every row younger than this, so a feed in a slow process still finds them.
    static let changesMinimumAgeSeconds = 60

    /// Deletes the rows older than both limits. The bound is the first young row's `seq`, found
    /// by a scan from the oldest row (`at` grows with `seq`), so a prune reads about the rows it
    /// deletes: `seq <= … AND at < …` read every young row too, all of a running import's log
    /// (300-700 ms every few seconds at a million users, each time inside an import chunk).
    /// A clock set back only keeps rows longer.
    static func prune(_ connection: SQLiteConnection) throws(SQLiteError) {
        let statement = try connection.statement("""
            DELETE FROM changes WHERE seq <= MIN(
                (SELECT MAX(seq) FROM changes) - ?1,
                COALESCE((SELECT seq FROM changes WHERE at >= ?2 ORDER BY seq LIMIT 1) - 1,
                         (SELECT MAX(seq) FROM changes)))
            """)
        statement.bind(1, changesKept)
        statement.bind(2, Int(Date().timeIntervalSince1970) - changesMinimumAgeSeconds)
        try statement.run("pruning the change log")
    }

    // MARK: for the benchmark and tests

    /// The cursor that continues after the `index`-th user (0-based) in list order. Uses
    /// OFFSET, once: for setting up benchmarks, never for serving pages.
    package func cursor(afterIndex index: Int) throws(UserError) -> PageCursor? {
        try read { connection throws(SQLiteError) -> PageCursor? in
            let statement = try connection.statement(
                "SELECT name_key, id FROM users ORDER BY name_key, id LIMIT 1 OFFSET ?1")
            defer { statement.reset() }
            statement.bind(1, index)
            guard try statement.step("positioning a cursor") else { return nil }
            return KeysetCursor(nameKey: statement.text(0), id: statement.text(1), total: nil).pageCursor
        }
    }

    /// SQLite's plan for a statement, for tests that pin index use.
    package func queryPlan(_ sql: String) throws(UserError) -> [String] {
        try read { connection throws(SQLiteError) -> [String] in
            let statement = try connection.statement("EXPLAIN QUERY PLAN " + sql)
            defer { statement.reset() }
            var lines: [String] = []
            while try statement.step("explaining a query") { lines.append(statement.text(3)) }
            return lines
        }
    }
}
