import CSQLite
import Foundation
import UserListDomain

/// Applies a committed staged import (`SQLiteImportStaging`) to `users` in one transaction:
/// every entry, or none. Kept apart from the staging so a history of changes can be written
/// beside the merge without touching how entries are staged.
///
/// Set-based, as `PostgresImportMerge` is: after the checks (`SQLiteImportValidation`) and the
/// history, one `INSERT ... SELECT ... ORDER BY id ON CONFLICT (id) DO UPDATE ... WHERE` the
/// data differs, in id order: the id index is walked once, left to right, so the pages it
/// touches stay few and the normal page cache does (row by row, an INSERT, and for a stored id
/// a SELECT and an UPDATE, per user, it set a 256 MiB cache; a 64 MiB one was not faster here).
///
/// It logs one `reloaded` change for the whole import (the change-log triggers are dropped
/// inside its transaction): every feed tells its sessions to read what they show again, once,
/// instead of handing them a change per user. The search index is the catch-up's, as after a
/// bulk load: the users the merge adds lie past the index's mark (`SQLiteSearchIndex`), and a
/// stored user whose keys change is re-indexed by the trigger that every save fires.
enum SQLiteImportMerge {
    struct Outcome: Sendable {
        var read = 0
        var written = 0
        var leftSearchBacklog = false
    }

    static let operation = "merging an import"

    /// Merges import `id`; a refused entry rolls the merge back, drops the import and comes back
    /// as `.failure(.rejectedEntry)`. A store failure throws and leaves the import committed.
    static func run(_ id: Int, _ connection: SQLiteConnection) throws(SQLiteError) -> Result<Outcome, UserError> {
        // The merge's sorts (the entries by id, the indexes it builds) spill to temporary files
        // past the page cache's size instead of growing the daemon: the writer keeps temporary
        // data in memory otherwise, and sorting 330,000 entries took its peak from 95 to 157
        // MiB. (The systemd unit's PrivateTmp gives it a writable /tmp.)
        try connection.execute("PRAGMA temp_store = FILE", operation)
        defer { _ = try? connection.execute("PRAGMA temp_store = MEMORY", operation) }
        let result: Result<Outcome, UserError>
        do throws(SQLiteError) {
            result = .success(try connection.writeTransaction(operation) { () throws(SQLiteError) -> Outcome in
                let outcome = try merge(id, connection)
                try SQLiteImportStaging.drop(where: "id = \(id)", connection)
                return outcome
            })
        } catch {
            guard let refusal = error.refusal else { throw error }
            result = .failure(refusal)
        }
        if case .failure = result {
            try connection.writeTransaction(operation) { () throws(SQLiteError) in
                try SQLiteImportStaging.drop(where: "id = \(id)", connection)
            }
        }
        return result
    }

    /// The last entry of each id (file order: a later entry wins, as `SQLiteHistory` records
    /// it), in id order. `max(position)` makes SQLite take the other columns from that entry;
    /// the `ORDER BY` inside, which the grouping's sort already gives, spares a second sort.
    static let latestEntries = """
        SELECT id, name, email, avatar_url, expected_version, name_key, email_key, max(position)
        FROM import_staged WHERE import_id = ?1 GROUP BY id ORDER BY id
        """

    /// Versions are honest: a new user gets its entry's version (or 1); a stored one whose data
    /// differs gets the stored version + 1 (or its entry's, if higher); one whose data is the
    /// same is not written (the `WHERE`), whatever version its entry names. An unchanged email
    /// keeps its stored key (see `SQLiteSchema.v4`). `sqlite3_changes` counts the rows written.
    /// (`WHERE true`: without a `WHERE`, SQLite's parser would read `ON` as a join's.)
    static let upsert = """
        INSERT INTO users (id, name, email, avatar_url, version, name_key, email_key)
        SELECT id, name, email, avatar_url, coalesce(expected_version, 1), name_key, email_key
        FROM (\(latestEntries)) WHERE true
        ON CONFLICT (id) DO UPDATE SET
            name = excluded.name, email = excluded.email, avatar_url = excluded.avatar_url,
            version = max(users.version + 1, excluded.version),
            name_key = excluded.name_key,
            email_key = CASE WHEN users.email = excluded.email THEN users.email_key ELSE excluded.email_key END
        WHERE users.name IS NOT excluded.name OR users.email IS NOT excluded.email
            OR users.avatar_url IS NOT excluded.avatar_url
        """

    /// The merge's statements, inside the caller's transaction. An import bigger than the store
    /// (and than `rebuildIndexesFrom`) builds the secondary indexes afterwards and empties the
    /// search index for the catch-up, as a bulk load does.
    private static func merge(_ id: Int, _ connection: SQLiteConnection) throws(SQLiteError) -> Outcome {
        try SQLiteImportValidation.check(id, connection)
        try recordHistory(of: id, connection)
        let count = try entries(of: id, connection)
        let stored = try connection.integer("SELECT user_count FROM store_state WHERE only = 1", operation)
        let rebuild = count >= SQLiteUserRepository.rebuildIndexesFrom && count > stored
        // The saves' search trigger stays for a smaller import: it re-indexes the stored users
        // whose keys change (one statement, so FTS5 writes its pending data once, not per row).
        let dropped = SQLiteSchema.changeLogTriggerNames + (rebuild ? SQLiteSearchIndex.triggerNames
            : SQLiteSearchIndex.triggerNames.filter { $0 != "users_search_saved" })
        for name in dropped { try connection.execute("DROP TRIGGER IF EXISTS \(name)", operation) }
        // The users this merge adds are the ones past `lastRowid`: SQLite gives a new row the
        // largest rowid + 1 (it would pick at random only once a rowid reached 2^63 - 1).
        let lastRowid = try connection.integer("SELECT ifnull(max(rowid), 0) FROM users", operation)
        let indexedThrough = try SQLiteSearchIndex.indexedThrough(connection, operation)
        if rebuild {
            for index in SQLiteSchema.secondaryIndexes { try connection.execute("DROP INDEX \(index.name)", operation) }
            try SQLiteSearchIndex.startOver(connection, operation)
        } else if indexedThrough == nil {
            try SQLiteSearchIndex.setIndexedThrough(lastRowid, connection, operation)
        }
        let written = try refusingDuplicateEmails { () throws(SQLiteError) -> Int in
            let statement = try connection.statement(upsert)
            defer { statement.reset() }
            statement.bind(1, id)
            try statement.run(operation)
            return connection.changes
        }
        if rebuild {
            for index in SQLiteSchema.secondaryIndexes {
                try refusingDuplicateEmails { () throws(SQLiteError) in try connection.execute(index.create, operation) }
            }
        }
        let added = try users(after: lastRowid, connection)
        if !rebuild && indexedThrough == nil && added == 0 {
            try SQLiteSearchIndex.setIndexedThrough(nil, connection, operation)  // nothing was left past the mark
        }
        try connection.execute("DROP TRIGGER IF EXISTS users_search_saved", operation)
        try connection.execute(SQLiteSchema.changeLogTriggers + SQLiteSearchIndex.createTriggers, operation)
        try connection.execute("UPDATE store_state SET user_count = user_count + \(added) WHERE only = 1", operation)
        if written > 0 { try logReload(connection) }
        let backlog = rebuild || added > 0 || indexedThrough != nil
        return Outcome(read: count, written: written, leftSearchBacklog: backlog)
    }

    /// How many entries import `id` holds (bound: the connection keeps a statement per text).
    private static func entries(of id: Int, _ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        let statement = try connection.statement("SELECT entries FROM imports WHERE id = ?1")
        defer { statement.reset() }
        statement.bind(1, id)
        return try statement.step(operation) ? statement.int(0) : 0
    }

    /// How many users lie past `rowid`: the ones the merge added.
    private static func users(after rowid: Int, _ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        let statement = try connection.statement("SELECT count(*) FROM users WHERE rowid > ?1")
        defer { statement.reset() }
        statement.bind(1, rowid)
        return try statement.step(operation) ? statement.int(0) : 0
    }

    /// Runs `body`, turning a broken unique email index into a refusal of the import. The checks
    /// make that impossible (every order of writing the entries is free of it); should one get
    /// through anyway, the import is dropped as refused rather than kept committed, which would
    /// have every later open of the store try it again and fail the same way.
    private static func refusingDuplicateEmails<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        do {
            return try body()
        } catch where error.primaryCode == SQLITE_CONSTRAINT {
            throw .refused(.validation(field: .email, message:
                "The import would give one email address to two users (\(error.detail)); nothing was imported."))
        }
    }

    /// The history entries of import `id`, from its staged entries against `users` before the
    /// merge writes (`SQLiteHistory.recordStagedImport`), as the author its commit named.
    private static func recordHistory(of id: Int, _ connection: SQLiteConnection) throws(SQLiteError) {
        let statement = try connection.statement("SELECT author FROM imports WHERE id = ?1")
        statement.bind(1, id)
        let json = try statement.step(operation) ? statement.optionalText(0) : nil
        statement.reset()
        guard let json, let author = try? JSONDecoder().decode(ChangeAuthor.self, from: Data(json.utf8)) else { return }
        try SQLiteHistory.recordStagedImport(id, author, connection)
    }

    /// One change-log row for the whole import: feeds hand their sessions `UserChange.resync`.
    static func logReload(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute(
            "INSERT INTO changes (kind, user_id, at) VALUES ('reloaded', '', \(Int(Date().timeIntervalSince1970)))", operation)
    }
}
