import CSQLite
import Dispatch
import Foundation
import UserListDomain

/// Applies a committed staged import (`SQLiteImportStaging`) to `users` in slices: steps of
/// about 20 ms over the next entries in id order, committed whenever another write waits, so
/// another client's write waits for one step at most, not for the whole import (issue #29:
/// p99 ≤ 50 ms).
///
/// What keeps it all or nothing, as the user sees it:
/// - The checks (`SQLiteImportValidation`) pass before the first slice, over every entry; a
///   refused import writes nothing.
/// - From the commit's mark on, the guard (`SQLiteImportGuard`) refuses any write that could
///   make a later slice fail: to a user not merged yet, or taking an address an entry gives.
/// - Each commit carries its mark (`import_progress.merged_through`, the last id merged):
///   a crash between slices resumes after the mark when the store opens, so no entry is applied
///   twice (a second application would bump its version again).
///
/// Each step, like the single transaction before it: the history of the users it adds or
/// changes, then those users written where their data differs (`apply`), with the honest
/// version rule; no trigger runs (none would do anything), and one `reloaded` row for the
/// whole import in its last slice (sessions get one reload, not a patch per user).
/// The secondary indexes stay: other clients read and write between slices. The search index
/// is left to the catch-up: the users it adds lie past the mark, the ones it renames are stale.
enum SQLiteImportMerge {
    struct Outcome: Sendable {
        var read = 0
        var written = 0
        var leftSearchBacklog = false
    }

    /// One slice's result: whether the import is merged now, and its writes so far.
    struct Slice: Sendable {
        var last: Bool
        var written: Int
        var added: Int
        /// The step size for the next slice.
        var rows: Int
    }

    static let operation = "merging an import"

    /// Past every id (UTF-8 orders U+10FFFF after any ASCII text): the last slice's bound.
    static let beyondEveryID = "\u{10FFFF}"

    /// The commit's part, inside its transaction: the progress row and the guard (which holds
    /// what `SQLiteImportSort` copies in next).
    static func begin(_ id: Int, _ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute("INSERT OR REPLACE INTO import_progress (import_id, phase) VALUES (\(id), 'sorting')",
                               operation)
        try connection.execute(SQLiteImportGuard.create(id), operation)
    }

    static func phase(_ id: Int, _ connection: SQLiteConnection) throws(SQLiteError) -> String? {
        let statement = try connection.statement("SELECT phase FROM import_progress WHERE import_id = ?1")
        defer { statement.reset() }
        statement.bind(1, id)
        return try statement.step(operation) ? statement.text(0) : nil
    }

    /// After the checks: `merging` (the slices may start) or `refused` (the guard goes, the
    /// entries are cleared).
    static func decide(_ id: Int, accepted: Bool, _ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.writeTransaction(operation) { () throws(SQLiteError) in
            let phase = accepted ? "merging" : "refused"
            try connection.execute("UPDATE import_progress SET phase = '\(phase)' WHERE import_id = \(id)", operation)
            if !accepted { try SQLiteImportGuard.drop(id, connection, operation) }
        }
    }

    /// Merges the entries after the mark in one transaction, `rows` at a time (sized to
    /// `SQLiteUserRepository.mergeSliceTarget` each), for as long as `more` says no other write
    /// waits: an import nobody else writes beside is one transaction, as cheap as the single
    /// merge was; one beside a stream of saves commits after each step (each commit rewrites
    /// the index pages its rows touched: about 3x the cost per entry, measured).
    ///
    /// The writer's triggers are off for the slice (`withoutTriggers`, not DDL): each would be a
    /// no-op here, and the guard's `RAISE(ABORT)` alone would make every write to `users` keep a
    /// statement journal (see `apply`). The change log gets the one `reloaded` row; the guard is
    /// for everyone else's writes; the search index leaves the users a slice adds to the
    /// catch-up (they lie past its mark) and those it renames too (listed as stale first);
    /// `user_count` is counted here.
    static func slice(_ id: Int, rows: Int, more: () -> Bool,
                      _ connection: SQLiteConnection) throws(SQLiteError) -> Slice {
        try connection.withoutTriggers(operation) { () throws(SQLiteError) -> Slice in
            try sliceTransaction(id, rows: rows, more: more, connection)
        }
    }

    private static func sliceTransaction(_ id: Int, rows: Int, more: () -> Bool,
                                         _ connection: SQLiteConnection) throws(SQLiteError) -> Slice {
        try connection.writeTransaction(operation) { () throws(SQLiteError) -> Slice in
            var mark = try text("SELECT merged_through FROM import_progress WHERE import_id = ?1", id, connection) ?? ""
            let lastRowid = try connection.integer("SELECT ifnull(max(rowid), 0) FROM users", operation)
            // The users this slice adds lie past the mark (SQLite gives a new row the largest
            // rowid + 1), for the catch-up; a catch-up between slices may have cleared it.
            let searchMark = try SQLiteSearchIndex.indexedThrough(connection, operation) ?? lastRowid
            try SQLiteSearchIndex.setIndexedThrough(searchMark, connection, operation)
            var rows = rows, written = 0, last = false
            let historyEntry = try historyEntry(of: id, connection)
            var counted = (added: 0, updated: 0)
            repeat {
                let start = DispatchTime.now().uptimeNanoseconds
                let bound = try text(
                    "SELECT id FROM import_merge WHERE import_id = ?1 AND id > ?2 ORDER BY id LIMIT 1 OFFSET ?3",
                    id, connection, mark, max(0, rows - 1))
                last = bound == nil
                let upper = bound ?? beyondEveryID
                if let entry = historyEntry {
                    let parts = try SQLiteHistoryBatch.recordMergeSlice(
                        entry, importID: id, after: mark, through: upper, connection)
                    counted.added += parts.added
                    counted.updated += parts.updated
                }
                let progress = try connection.statement(
                    "UPDATE import_progress SET merged_through = ?2, phase = ?3 WHERE import_id = ?1")
                progress.bind(1, id)
                progress.bind(2, upper)
                progress.bind(3, last ? "merged" : "merging")
                try progress.run(operation)
                try leaveRenamedToCatchUp(id, after: mark, through: upper, searchMark: searchMark, connection)
                written += try apply(id, after: mark, through: upper, connection)
                mark = upper
                rows = SQLiteUserRepository.nextSliceRows(rows, since: start, range: 100...20_000)
            } while !last && more()
            let added = try users(after: lastRowid, connection)
            try connection.execute(
                "UPDATE store_state SET user_count = user_count + \(added) WHERE only = 1", operation)
            let count = try connection.statement(
                "UPDATE import_progress SET written = written + ?2 WHERE import_id = ?1 RETURNING written")
            defer { count.reset() }
            count.bind(1, id)
            count.bind(2, written)
            let total = try count.step(operation) ? count.int(0) : written
            count.reset()
            if let historyEntry {
                try SQLiteHistoryBatch.count(historyEntry, added: counted.added, updated: counted.updated, connection)
                if last { try SQLiteHistoryBatch.finish(historyEntry, connection) }
            }
            if last {
                try SQLiteImportGuard.drop(id, connection, operation)
                if total > 0 { try logReload(connection) }
            }
            return Slice(last: last, written: total, added: added, rows: rows)
        }
    }

    /// Writes the entries after `mark` through `upper`; the rows written. Versions are honest: a
    /// new user gets its entry's version (or 1); a stored one whose data differs gets the stored
    /// version + 1 (or its entry's, if higher); one whose data is the same is not written,
    /// whatever version its entry names. An unchanged email keeps its stored key (see
    /// `SQLiteSchema.v4`). `import_merge` holds each id's last entry, in id order.
    ///
    /// The stored users one by one, then the new ones in one `INSERT`, each `OR ROLLBACK` and with
    /// no trigger: SQLite then keeps no statement journal. A multi-row statement that may abort
    /// (an `ON CONFLICT DO UPDATE` always may, as may any multi-row `UPDATE`) copies every page it
    /// touches that an earlier statement of the transaction dirtied into that journal first: in a
    /// transaction of many steps, most of the index pages, again and again (0.9 s of a 330,000-entry
    /// merge). The checks make a constraint failure here impossible; were one to happen anyway,
    /// the whole slice rolls back, as a failed statement's caller would have done.
    static func apply(_ id: Int, after mark: String, through upper: String,
                      _ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        let changed = try connection.statement("""
            SELECT u.rowid FROM import_merge s JOIN users u ON u.id = s.id
            WHERE s.import_id = ?1 AND s.id > ?2 AND s.id <= ?3 AND \(storedDiffers)
            """)
        changed.bind(1, id)
        changed.bind(2, mark)
        changed.bind(3, upper)
        var stored: [Int] = []
        while try changed.step(operation) { stored.append(changed.int(0)) }
        changed.reset()
        let update = try connection.statement("""
            UPDATE OR ROLLBACK users SET (name, email, avatar_url, version, name_key, email_key) =
                (SELECT s.name, s.email, s.avatar_url, \(versionAfter("users")),
                        s.name_key, CASE WHEN users.email = s.email THEN users.email_key ELSE s.email_key END
                 FROM import_merge s WHERE s.import_id = ?1 AND s.id = users.id)
            WHERE users.rowid = ?2
            """)
        for rowid in stored {
            update.bind(1, id)
            update.bind(2, rowid)
            try update.run(operation)
        }
        return stored.count + (try run(insertNew, id, mark, upper, connection))
    }

    /// SQL: whether stored user `u` differs from entry `s`; only such a user is written (and
    /// recorded in the history: `SQLiteHistoryBatch.recordMergeSlice`).
    static let storedDiffers = "(u.name IS NOT s.name OR u.email IS NOT s.email OR u.avatar_url IS NOT s.avatar_url)"

    /// SQL: the version entry `s` gives the stored user `stored` (the next, or the entry's if higher).
    static func versionAfter(_ stored: String) -> String {
        "max(\(stored).version + 1, coalesce(s.expected_version, 1))"
    }

    private static let insertNew = """
        INSERT OR ROLLBACK INTO users (id, name, email, avatar_url, version, name_key, email_key)
        SELECT id, name, email, avatar_url, coalesce(expected_version, 1), name_key, email_key
        FROM import_merge s WHERE import_id = ?1 AND id > ?2 AND id <= ?3
            AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = s.id)
        ORDER BY id
        """

    /// Lists the users of a step whose keys `apply` is about to change, and that the search
    /// index holds, as stale (`SQLiteSearchIndex`): the catch-up replaces their entries after
    /// the reply, and the triggers leave them alone. A user listed already keeps the key the
    /// index holds. (The new keys as `apply` computes them: `email_key` changes only with the
    /// email.)
    private static func leaveRenamedToCatchUp(_ id: Int, after mark: String, through upper: String, searchMark: Int,
                                              _ connection: SQLiteConnection) throws(SQLiteError) {
        let statement = try connection.statement("""
            INSERT OR IGNORE INTO search_stale (user_rowid, indexed_key)
            SELECT u.rowid, u.name_key || char(10) || u.email_key
            FROM import_merge s JOIN users u ON u.id = s.id
            WHERE s.import_id = ?1 AND s.id > ?2 AND s.id <= ?3 AND u.rowid <= ?4
                AND (u.name_key IS NOT s.name_key OR (u.email IS NOT s.email AND u.email_key IS NOT s.email_key))
            """)
        defer { statement.reset() }
        statement.bind(1, id)
        statement.bind(2, mark)
        statement.bind(3, upper)
        statement.bind(4, searchMark)
        try statement.run(operation)
    }

    /// Deletes import `id`'s staged and merge rows, `rows` at a time, while `more` says no
    /// other write waits; once none are left, the import itself. Returns whether it is gone, and
    /// the step size for next time.
    static func clear(_ id: Int, rows: Int, more: () -> Bool,
                      _ connection: SQLiteConnection) throws(SQLiteError) -> (Bool, Int) {
        try connection.writeTransaction(operation) { () throws(SQLiteError) -> (Bool, Int) in
            var rows = rows, left = true
            repeat {
                let start = DispatchTime.now().uptimeNanoseconds
                try connection.execute("""
                    DELETE FROM import_staged
                    WHERE rowid IN (SELECT rowid FROM import_staged WHERE import_id = \(id) LIMIT \(rows))
                    """, operation)
                left = connection.changes == rows
                try connection.execute("""
                    DELETE FROM import_merge WHERE import_id = \(id)
                        AND id IN (SELECT id FROM import_merge WHERE import_id = \(id) ORDER BY id LIMIT \(rows))
                    """, operation)
                left = left || connection.changes == rows
                try connection.execute("""
                    DELETE FROM import_emails WHERE import_id = \(id) AND (email_key, id) IN
                        (SELECT email_key, id FROM import_emails WHERE import_id = \(id)
                         ORDER BY email_key, id LIMIT \(rows))
                    """, operation)
                left = left || connection.changes == rows
                rows = SQLiteUserRepository.nextSliceRows(rows, since: start, range: 1_000...100_000)
            } while left && more()
            if !left {
                try SQLiteImportGuard.drop(id, connection, operation)
                try connection.execute("""
                    DELETE FROM import_progress WHERE import_id = \(id);
                    DELETE FROM import_entries WHERE import_id = \(id);
                    DELETE FROM imports WHERE id = \(id)
                    """, operation)
            }
            return (!left, rows)
        }
    }

    /// Finishes import `id` on `connection` alone: when the store opens, before anything is
    /// served, from wherever a crash left it. An import committed by an older release has no
    /// progress row: it gets one first.
    static func finish(_ id: Int, _ connection: SQLiteConnection) throws(SQLiteError) -> Result<Outcome, UserError> {
        var outcome = Outcome(read: try entries(of: id, connection))
        var refusal: UserError?
        if try phase(id, connection) == nil {
            try connection.writeTransaction(operation) { () throws(SQLiteError) in try begin(id, connection) }
        }
        SQLiteImportSort.discard(id, store: connection.path, nil)
        if try phase(id, connection) == "sorting" { try SQLiteImportSort.fillAtOnce(id, connection) }
        if try phase(id, connection) == "checking" {
            refusal = try connection.readTransaction(operation) { () throws(SQLiteError) -> UserError? in
                try SQLiteImportValidation.refusal(id, connection)
            }
            try decide(id, accepted: refusal == nil, connection)
        }
        if try phase(id, connection) == "merging" {
            let slice = try slice(id, rows: 50_000, more: { true }, connection)
            outcome.written = slice.written
            outcome.leftSearchBacklog = slice.written > 0
        }
        while try !clear(id, rows: 50_000, more: { true }, connection).0 {}
        return refusal.map { .failure($0) } ?? .success(outcome)
    }

    /// How many entries import `id` holds (bound: the connection keeps a statement per text).
    static func entries(of id: Int, _ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        Int(try text("SELECT entries FROM imports WHERE id = ?1", id, connection) ?? "") ?? 0
    }

    /// How many users lie past `rowid`: the ones the slice added.
    private static func users(after rowid: Int, _ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        let statement = try connection.statement("SELECT count(*) FROM users WHERE rowid > ?1")
        defer { statement.reset() }
        statement.bind(1, rowid)
        return try statement.step(operation) ? statement.int(0) : 0
    }

    /// The import's one history entry (`SQLiteHistoryBatch`), as the author the commit named;
    /// nil when it names none (a store-level import records no history).
    private static func historyEntry(of id: Int, _ connection: SQLiteConnection) throws(SQLiteError) -> Int64? {
        guard let json = try text("SELECT author FROM imports WHERE id = ?1", id, connection),
              let author = try? JSONDecoder().decode(ChangeAuthor.self, from: Data(json.utf8)) else { return nil }
        return try SQLiteHistoryBatch.entry(ofImport: id, author.via(.import), connection)
    }

    /// Runs `sql` with `?1` import `id`, `?2` and `?3` the id bounds; the rows it wrote.
    private static func run(_ sql: String, _ id: Int, _ mark: String, _ upper: String,
                            _ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        statement.bind(1, id)
        statement.bind(2, mark)
        statement.bind(3, upper)
        try statement.run(operation)
        return connection.changes
    }

    /// The first column of `sql`'s first row as text (nil: no row, or NULL); `?1` is `id`.
    private static func text(_ sql: String, _ id: Int, _ connection: SQLiteConnection,
                             _ after: String? = nil, _ offset: Int? = nil) throws(SQLiteError) -> String? {
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        statement.bind(1, id)
        if let after { statement.bind(2, after) }
        if let offset { statement.bind(3, offset) }
        return try statement.step(operation) ? statement.optionalText(0) : nil
    }

    /// One change-log row for the whole import: feeds hand their sessions `UserChange.resync`.
    static func logReload(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute(
            "INSERT INTO changes (kind, user_id, at) VALUES ('reloaded', '', \(Int(Date().timeIntervalSince1970)))",
            operation)
    }
}
