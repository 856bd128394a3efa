import CSQLite
import Foundation
import UserListDomain

/// An import in the history: one `history` row for the whole import (`kind = 'imported'`, no
/// user, its source and counts), and one slim row per user it wrote in `history_parts` (the
/// user's kind, the fields before, the version after), so a user's history still shows what the
/// import did to them and its undo can put every user back.
///
/// Why a table of its own and slim rows: a million-user import used to write a million
/// `history` rows, each carrying the author and updating two indexes; a part is the entry's
/// number, the id, and the before-image only for users it updated (clustered by entry, one
/// index by user). The fields after are not stored: they are the next entry's `before` for
/// that user, or the user as stored (`SQLiteUserRepository.completingParts`).
enum SQLiteHistoryBatch {
    /// v10: `history` takes whole imports (no user, a source and counts), and `history_parts`.
    /// (SQLite cannot alter a CHECK: the table is copied, keeping every row and the counter.)
    static let v10 = """
        CREATE TABLE history_v10 (
            entry             INTEGER PRIMARY KEY AUTOINCREMENT,
            at                INTEGER NOT NULL,
            user_id           TEXT,
            kind              TEXT NOT NULL CHECK (kind IN ('added', 'saved', 'removed', 'imported')),
            via               TEXT NOT NULL,
            actor_uid         INTEGER,
            actor_name        TEXT,
            client            TEXT,
            daemon            TEXT,
            reverts           INTEGER,
            before_name       TEXT,
            before_email      TEXT,
            before_avatar_url TEXT,
            after_name        TEXT,
            after_email       TEXT,
            after_avatar_url  TEXT,
            version_after     INTEGER,
            source            TEXT,
            added             INTEGER,
            updated           INTEGER,
            removed           INTEGER
        );
        INSERT INTO history_v10 (entry, at, user_id, kind, via, actor_uid, actor_name, client, daemon, reverts,
                                 before_name, before_email, before_avatar_url,
                                 after_name, after_email, after_avatar_url, version_after)
            SELECT entry, at, user_id, kind, via, actor_uid, actor_name, client, daemon, reverts,
                   before_name, before_email, before_avatar_url,
                   after_name, after_email, after_avatar_url, version_after
            FROM history;
        DELETE FROM sqlite_sequence WHERE name = 'history_v10';
        INSERT INTO sqlite_sequence (name, seq) SELECT 'history_v10', seq FROM sqlite_sequence WHERE name = 'history';
        DROP TABLE history;
        ALTER TABLE history_v10 RENAME TO history;
        CREATE INDEX history_by_user ON history (user_id, entry);
        CREATE INDEX history_by_actor ON history (actor_uid, entry);
        CREATE TABLE history_parts (
            entry             INTEGER NOT NULL,
            user_id           TEXT NOT NULL,
            kind              TEXT NOT NULL,
            before_name       TEXT,
            before_email      TEXT,
            before_avatar_url TEXT,
            version_after     INTEGER,
            PRIMARY KEY (entry, user_id)
        ) WITHOUT ROWID;
        CREATE INDEX history_parts_by_user ON history_parts (user_id, entry);
        """

    static let operation = "recording the import in the history"

    /// A staged import's entry, once its first slice made it (a merge resumed after a crash adds
    /// to it); among the staging tables, created at open and cleared with the import.
    static let stagingTable = """
        CREATE TABLE IF NOT EXISTS import_entries (import_id INTEGER PRIMARY KEY, entry INTEGER NOT NULL);
        """

    /// Import `importID`'s entry, begun now if it has none yet.
    static func entry(ofImport importID: Int, _ author: ChangeAuthor,
                      _ connection: SQLiteConnection) throws(SQLiteError) -> Int64 {
        let found = try connection.statement("SELECT entry FROM import_entries WHERE import_id = ?1")
        defer { found.reset() }
        found.bind(1, importID)
        if try found.step(operation) { return Int64(found.int(0)) }
        found.reset()
        let entry = try begin(author, connection)
        let remember = try connection.statement("INSERT INTO import_entries (import_id, entry) VALUES (?1, ?2)")
        remember.bind(1, importID)
        remember.bind(2, Int(entry))
        try remember.run(operation)
        return entry
    }

    /// Starts a batch's entry (counts zero, added to as parts are written); returns its number.
    static func begin(_ author: ChangeAuthor, _ connection: SQLiteConnection) throws(SQLiteError) -> Int64 {
        let statement = try connection.statement("""
            INSERT INTO history (at, via, actor_uid, actor_name, client, daemon, reverts, kind, source, added, updated,
                                 removed)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'imported', ?8, 0, 0, 0)
            """)
        SQLiteHistory.bind(statement, author)
        statement.bind(8, author.source)
        try statement.run(operation)
        return Int64(sqlite3_last_insert_rowid(connection.handle))
    }

    /// Adds to the entry's counts; an entry left with nothing counted is deleted at `finish`.
    static func count(_ entry: Int64, added: Int, updated: Int, removed: Int = 0,
                      _ connection: SQLiteConnection) throws(SQLiteError) {
        let statement = try connection.statement("""
            UPDATE history SET added = added + ?2, updated = updated + ?3, removed = removed + ?4 WHERE entry = ?1
            """)
        statement.bind(1, Int(entry))
        statement.bind(2, added)
        statement.bind(3, updated)
        statement.bind(4, removed)
        try statement.run(operation)
    }

    /// An import that wrote nothing is no entry (a file imported twice changes nothing).
    static func finish(_ entry: Int64, _ connection: SQLiteConnection) throws(SQLiteError) {
        let statement = try connection.statement(
            "DELETE FROM history WHERE entry = ?1 AND added = 0 AND updated = 0 AND removed = 0")
        statement.bind(1, Int(entry))
        try statement.run(operation)
    }

    /// One user's part: `?1` entry, `?2` id, `?3` kind, `?4`...`?6` the fields before, `?7` the
    /// version after. A user the file names twice keeps its first part (what it was before the
    /// import) with the version its last entry gave it.
    static let insertPart = """
        INSERT INTO history_parts (entry, user_id, kind, before_name, before_email, before_avatar_url, version_after)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
        ON CONFLICT (entry, user_id) DO UPDATE SET version_after = excluded.version_after
        """

    /// A merge slice's parts (`SQLiteImportMerge`), set-based, before the slice writes: the
    /// users it adds or changes (an entry equal to the stored user changes nothing and is not
    /// recorded), with the stored fields as before and the version `SQLiteImportMerge.apply`
    /// will give. Returns how many it adds and how many it updates. `OR ROLLBACK`: no statement
    /// journal (see `apply`).
    static func recordMergeSlice(_ entry: Int64, importID: Int, after mark: String, through upper: String,
                                 _ connection: SQLiteConnection) throws(SQLiteError) -> (added: Int, updated: Int) {
        let statement = try connection.statement("""
            INSERT OR ROLLBACK INTO history_parts (entry, user_id, kind, before_name, before_email,
                                                   before_avatar_url, version_after)
            SELECT ?1, s.id, CASE WHEN u.id IS NULL THEN 'added' ELSE 'saved' END, u.name, u.email, u.avatar_url,
                   CASE WHEN u.id IS NULL THEN coalesce(s.expected_version, 1)
                        ELSE \(SQLiteImportMerge.versionAfter("u")) END
            FROM import_merge s LEFT JOIN users u ON u.id = s.id
            WHERE s.import_id = ?2 AND s.id > ?3 AND s.id <= ?4 AND (u.id IS NULL OR \(SQLiteImportMerge.storedDiffers))
            ORDER BY s.id
            RETURNING kind = 'added'
            """)
        defer { statement.reset() }
        statement.bind(1, Int(entry))
        statement.bind(2, importID)
        statement.bind(3, mark)
        statement.bind(4, upper)
        var counts = (added: 0, updated: 0)
        while try statement.step(operation) {
            if statement.int(0) == 1 { counts.added += 1 } else { counts.updated += 1 }
        }
        return counts
    }

    /// A bulk load into an empty store: every user stored is one it added.
    static func recordEveryUserAdded(_ entry: Int64, _ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        let statement = try connection.statement("""
            INSERT INTO history_parts (entry, user_id, kind, version_after) SELECT ?1, id, 'added', version FROM users
            """)
        statement.bind(1, Int(entry))
        try statement.run(operation)
        return connection.changes
    }
}
