import Dispatch
import Foundation

/// Sorts a committed import's entries off the writer, then copies them into the store in key
/// order, a slice at a time: the merge's slices read `import_merge` (each id's last entry, by
/// id), the guard (`SQLiteImportGuard`) looks up `import_merge` and `import_emails` (the
/// addresses, by address).
///
/// Why a side file: filling those tables as chunks arrive (random ids, random addresses) cost
/// 25 ms a chunk of 1,000 instead of 1.6 (each chunk dirtied a page of each B-tree per entry,
/// all written to the WAL), and one `INSERT ... SELECT ... GROUP BY id` on the writer is the
/// long hold the slices are there to avoid (0.3 s at 100,000 entries). So a connection of its
/// own sorts them into `<store>-import-<id>` (a scratch database: no journal, no sync; made
/// again from `import_staged` if lost), and the writer, with that file attached, appends them
/// to the store's tables in order, which touches few pages per slice.
enum SQLiteImportSort {
    static let operation = "sorting an import"
    static let schema = "import_side"

    static func sidePath(_ store: String, _ id: Int) -> String { "\(store)-import-\(id)" }

    /// Builds the side file of import `id` (on the caller's thread: seconds for a big import).
    static func sort(_ id: Int, store: String) throws(SQLiteError) {
        let side = sidePath(store, id)
        unlink(side)
        let connection = try SQLiteConnection(path: side, mode: .readWrite, busyTimeoutMilliseconds: 5_000)
        try connection.execute("""
            PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA temp_store = FILE;
            ATTACH DATABASE '\(quoted(store))' AS store;
            CREATE TABLE latest (
                id TEXT PRIMARY KEY, position INTEGER NOT NULL, name TEXT NOT NULL, email TEXT NOT NULL,
                avatar_url TEXT, expected_version INTEGER, name_key TEXT NOT NULL, email_key TEXT NOT NULL
            ) WITHOUT ROWID;
            INSERT INTO latest
                SELECT id, max(position), name, email, avatar_url, expected_version, name_key, email_key
                FROM store.import_staged WHERE import_id = \(id) GROUP BY id ORDER BY id;
            CREATE TABLE emails (email_key TEXT, id TEXT, PRIMARY KEY (email_key, id)) WITHOUT ROWID;
            INSERT INTO emails SELECT email_key, id FROM latest WHERE true ORDER BY email_key, id;
            DETACH DATABASE store;
            """, operation)
    }

    static func attach(_ id: Int, store: String, _ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute("ATTACH DATABASE '\(quoted(sidePath(store, id)))' AS \(schema)", operation)
    }

    /// Detaches and deletes the side file (no error when it is not there).
    static func discard(_ id: Int, store: String, _ connection: SQLiteConnection?) {
        if let connection { _ = try? connection.execute("DETACH DATABASE \(schema)", operation) }
        unlink(sidePath(store, id))
    }

    /// Appends the entries and addresses from the attached side file, `rows` at a time, in one
    /// transaction while `more` says no other write waits; whether both are in (the phase then
    /// moves on to the checks), and the step size for next time.
    static func fill(_ id: Int, rows: Int, more: () -> Bool,
                     _ connection: SQLiteConnection) throws(SQLiteError) -> (Bool, Int) {
        try connection.writeTransaction(operation) { () throws(SQLiteError) -> (Bool, Int) in
            var rows = rows, done = false
            repeat {
                let start = DispatchTime.now().uptimeNanoseconds
                let entries = try run("""
                    INSERT INTO import_merge (import_id, id, position, name, email, avatar_url, expected_version,
                                              name_key, email_key)
                    SELECT ?1, id, position, name, email, avatar_url, expected_version, name_key, email_key
                    FROM \(schema).latest
                    WHERE id > coalesce((SELECT max(id) FROM import_merge WHERE import_id = ?1), '')
                    ORDER BY id LIMIT ?2
                    """, id, rows, connection)
                let last = try connection.statement(
                    "SELECT email_key, id FROM import_emails WHERE import_id = ?1 "
                    + "ORDER BY email_key DESC, id DESC LIMIT 1")
                last.bind(1, id)
                let after = try last.step(operation) ? (last.text(0), last.text(1)) : ("", "")
                last.reset()
                let addresses = try run("""
                    INSERT INTO import_emails (import_id, email_key, id)
                    SELECT ?1, email_key, id FROM \(schema).emails WHERE (email_key, id) > (?3, ?4)
                    ORDER BY email_key, id LIMIT ?2
                    """, id, rows, connection, after)
                done = entries < rows && addresses < rows
                rows = SQLiteUserRepository.nextSliceRows(rows, since: start, range: 1_000...100_000)
            } while !done && more()
            if done {
                try connection.execute("UPDATE import_progress SET phase = 'checking' WHERE import_id = \(id)",
                                       operation)
            }
            return (done, rows)
        }
    }

    /// The same, all at once, when the store opens (nothing else runs then): from
    /// `import_staged`, after dropping what a crash left half-copied.
    static func fillAtOnce(_ id: Int, _ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.writeTransaction(operation) { () throws(SQLiteError) in
            try connection.execute("""
                DELETE FROM import_merge WHERE import_id = \(id);
                DELETE FROM import_emails WHERE import_id = \(id);
                INSERT INTO import_merge (import_id, id, position, name, email, avatar_url, expected_version,
                                          name_key, email_key)
                    SELECT import_id, id, max(position), name, email, avatar_url, expected_version, name_key, email_key
                    FROM import_staged WHERE import_id = \(id) GROUP BY id ORDER BY id;
                INSERT INTO import_emails (import_id, email_key, id)
                    SELECT import_id, email_key, id FROM import_merge WHERE import_id = \(id) ORDER BY email_key, id;
                UPDATE import_progress SET phase = 'checking' WHERE import_id = \(id);
                """, operation)
        }
    }

    private static func run(_ sql: String, _ id: Int, _ rows: Int, _ connection: SQLiteConnection,
                            _ after: (String, String)? = nil) throws(SQLiteError) -> Int {
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        statement.bind(1, id)
        statement.bind(2, rows)
        if let after {
            statement.bind(3, after.0)
            statement.bind(4, after.1)
        }
        try statement.run(operation)
        return connection.changes
    }

    private static func quoted(_ path: String) -> String { path.replacingOccurrences(of: "'", with: "''") }
}
