import CSQLite

/// The store's schema, versioned by `PRAGMA user_version` and migrated forward step by step,
/// each step in its own transaction (a crash mid-migration leaves the previous version intact).
///
/// - v1: `users` with a NOCASE index on the name (ASCII-only case folding, no email index).
/// - v2: `name_key` and `email_key` (Unicode-lowercased name and email), backfilled with
///   `userlist_fold`, indexed as `(name_key, id)` and `(email_key, id)` for keyset pages and
///   prefix search; the v1 NOCASE index is dropped.
/// - v3: the `changes` log behind `SQLiteChangeFeed` and the row count in `store_state`, both
///   kept by triggers so that every writer (this process, another process, even a hand-written
///   SQL statement) records its changes in the same transaction, with a snapshot of the row.
///   The bulk import is the one exception, for speed (see `SQLiteUserRepository.upsert`): inside
///   its own transaction it drops the triggers on `users`, writes slim change rows (kind and id,
///   no snapshot), the count and the search index itself, and creates the triggers again before
///   committing, so no other connection ever sees them missing. (`log_changes` is the switch the
///   v4 migration still uses.)
/// - v4: one text key for sorting and searching (`TextKey`: NFKC, case-, accent- and
///   width-insensitive): `name_key` and `email_key` recomputed with `userlist_fold`, and emails
///   unique case-insensitively (`users_by_email_key` becomes a UNIQUE index on `email_key`).
///   Duplicates that older versions let in are kept, not deleted: the first user with an
///   address (lowest rowid) keeps the plain key, every later one gets `<key> <id>` (emails hold
///   no spaces, so such a key never equals a real one, and prefix search still finds it). Such a
///   user can be renamed as before; changing their email to one in use is refused as
///   `duplicateEmail`, so the duplicates go away as people fix them (`SQLiteSchema.duplicateEmails`
///   lists them). The change log is off while keys are rewritten: no user changed.
/// - v5: substring search. `users_search` is a contentless FTS5 table with the trigram tokenizer
///   and `detail=none` (the smallest index FTS5 can keep): one row per user, keyed by the users'
///   rowid, holding `name_key || char(10) || email_key`. Triggers keep it in step with every
///   writer, like the change log; an import maintains the index itself. A query asks for every
///   trigram of the folded term (a superset of the matches) and `instr` on the keys keeps the
///   real ones; see `SQLiteSearch`. VACUUM may renumber rowids of this table (no INTEGER
///   PRIMARY KEY): the index would then have to be rebuilt (`SQLiteSearchIndex.startOver`, then
///   the catch-up); the store never VACUUMs.
/// - v6: `users_by_name_key` also holds `email_key`, so a broad search (a term too common for
///   the trigram index to narrow) walks the index in list order checking both keys without
///   reading the table row of each user it skips: the first page of "son" at 1M users went from
///   36 ms to 3 ms. Rebuilding the index takes about 1.5 s per million users, once.
/// - v7: the search index's backlog (`store_state.search_indexed_through`): a bulk load leaves
///   the index to catch up afterwards, and the triggers leave users past the mark to it (see
///   `SQLiteSearchIndex`). And a change-log kind, `reloaded`: a bulk load into an empty store
///   logs that one row instead of an `added` row per user, and feeds tell their readers to
///   read everything again (`UserChange.resync`). The `changes` table is copied into one that
///   allows the kind (SQLite cannot alter a CHECK), keeping every row and the `seq` counter.
/// - v8: `history`, who changed which user and how (`SQLiteHistory`), kept apart from the
///   change log: the log is pruned for the feeds' sake, the history by its own retention.
/// - v9: `users_by_name_key` holds the rest of the row too (name, email, avatar URL, version),
///   so a page in list order is read from the index alone, in order. Before, each user of a page
///   was a lookup in the table, which is in rowid order, not name order: a random page a user,
///   most of a fresh daemon's CPU in a 300,000-user export (BENCHMARKS.md, "Where the time
///   goes"). The price: the index is as big as the table (the file +14 %
///   at 300,000 sample users), and a save rewrites the user's entry (its version is in it).
/// - v10: an import is one history entry, with a slim part per user (`SQLiteHistoryBatch`).
/// - v11: `search_stale`, users whose search entry an import's merge left to the catch-up
///   (`SQLiteSearchIndex`), and triggers that leave them alone.
enum SQLiteSchema {
    static let currentVersion = 11

    /// The v1 schema exactly as the first release wrote it (kept for `migrate` and for tests
    /// that build an old file by hand).
    static let v1 = """
        CREATE TABLE users (
            id         TEXT PRIMARY KEY NOT NULL,
            name       TEXT NOT NULL,
            email      TEXT NOT NULL,
            avatar_url TEXT,
            version    INTEGER NOT NULL DEFAULT 1
        );
        CREATE INDEX users_by_name ON users (name COLLATE NOCASE, id);
        """

    static let v2 = """
        ALTER TABLE users ADD COLUMN name_key TEXT NOT NULL DEFAULT '';
        ALTER TABLE users ADD COLUMN email_key TEXT NOT NULL DEFAULT '';
        UPDATE users SET name_key = userlist_fold(name), email_key = userlist_fold(email);
        DROP INDEX IF EXISTS users_by_name;
        CREATE INDEX users_by_name_key ON users (name_key, id);
        CREATE INDEX users_by_email_key ON users (email_key, id);
        """

    /// The indexes that keyset pages and search use. A big import drops and recreates them
    /// (building an index sorts once; inserting a million random keys one by one does not).
    static let secondaryIndexes: [(name: String, create: String)] = [
        ("users_by_name_key", v9NameIndex),
        ("users_by_email_key", "CREATE UNIQUE INDEX users_by_email_key ON users (email_key)"),
    ]

    /// The change log's table (v3, and v7 with one kind more).
    static func changesTable(_ name: String, kinds: [String]) -> String {
        """
        CREATE TABLE \(name) (
            seq        INTEGER PRIMARY KEY AUTOINCREMENT,
            kind       TEXT NOT NULL CHECK (kind IN (\(kinds.map { "'\($0)'" }.joined(separator: ", ")))),
            user_id    TEXT NOT NULL,
            name       TEXT,
            email      TEXT,
            avatar_url TEXT,
            version    INTEGER,
            at         INTEGER NOT NULL
        );
        """
    }

    static let v3 = changesTable("changes", kinds: ["added", "saved", "removed"]) + """
        CREATE TABLE store_state (
            only        INTEGER PRIMARY KEY CHECK (only = 1),
            user_count  INTEGER NOT NULL,
            log_changes INTEGER NOT NULL
        );
        INSERT INTO store_state (only, user_count, log_changes) VALUES (1, (SELECT COUNT(*) FROM users), 1);
        """ + changeLogTriggers

    /// The change log's triggers (part of v3), by name and as SQL: a bulk import drops them inside
    /// its own transaction and puts them back before it commits (see `importUsers`).
    static let changeLogTriggerNames = ["users_added", "users_saved", "users_removed"]
    static let changeLogTriggers = """
        CREATE TRIGGER users_added AFTER INSERT ON users
        WHEN (SELECT log_changes FROM store_state WHERE only = 1) BEGIN
            INSERT INTO changes (kind, user_id, name, email, avatar_url, version, at)
            VALUES ('added', NEW.id, NEW.name, NEW.email, NEW.avatar_url, NEW.version,
                    CAST(strftime('%s', 'now') AS INTEGER));
            UPDATE store_state SET user_count = user_count + 1 WHERE only = 1;
        END;
        CREATE TRIGGER users_saved AFTER UPDATE ON users
        WHEN (SELECT log_changes FROM store_state WHERE only = 1) BEGIN
            INSERT INTO changes (kind, user_id, name, email, avatar_url, version, at)
            VALUES ('saved', NEW.id, NEW.name, NEW.email, NEW.avatar_url, NEW.version,
                    CAST(strftime('%s', 'now') AS INTEGER));
        END;
        CREATE TRIGGER users_removed AFTER DELETE ON users
        WHEN (SELECT log_changes FROM store_state WHERE only = 1) BEGIN
            INSERT INTO changes (kind, user_id, at) VALUES ('removed', OLD.id, CAST(strftime('%s', 'now') AS INTEGER));
            UPDATE store_state SET user_count = user_count - 1 WHERE only = 1;
        END;
        """

    static let v4 = """
        UPDATE store_state SET log_changes = 0 WHERE only = 1;
        UPDATE users SET name_key = userlist_fold(name), email_key = userlist_fold(email);
        UPDATE users SET email_key = email_key || ' ' || id
        WHERE rowid NOT IN (SELECT MIN(rowid) FROM users GROUP BY email_key);
        DROP INDEX IF EXISTS users_by_email_key;
        CREATE UNIQUE INDEX users_by_email_key ON users (email_key);
        UPDATE store_state SET log_changes = 1 WHERE only = 1;
        """

    static let v5 = """
        CREATE VIRTUAL TABLE users_search USING fts5(key, content='', tokenize='trigram', detail='none');
        INSERT INTO users_search (rowid, key) SELECT rowid, name_key || char(10) || email_key FROM users;
        CREATE TRIGGER users_search_added AFTER INSERT ON users BEGIN
            INSERT INTO users_search (rowid, key) VALUES (NEW.rowid, NEW.name_key || char(10) || NEW.email_key);
        END;
        CREATE TRIGGER users_search_saved AFTER UPDATE OF name_key, email_key ON users
        WHEN OLD.name_key IS NOT NEW.name_key OR OLD.email_key IS NOT NEW.email_key BEGIN
            INSERT INTO users_search (users_search, rowid, key)
                VALUES ('delete', OLD.rowid, OLD.name_key || char(10) || OLD.email_key);
            INSERT INTO users_search (rowid, key) VALUES (NEW.rowid, NEW.name_key || char(10) || NEW.email_key);
        END;
        CREATE TRIGGER users_search_removed AFTER DELETE ON users BEGIN
            INSERT INTO users_search (users_search, rowid, key)
                VALUES ('delete', OLD.rowid, OLD.name_key || char(10) || OLD.email_key);
        END;
        """

    static let v6NameIndex = "CREATE INDEX users_by_name_key ON users (name_key, id, email_key)"
    static let v6 = "DROP INDEX IF EXISTS users_by_name_key; " + v6NameIndex

    /// The list order's keys, then every column a page reads (`SQLiteUserRepository.columns`).
    static let v9NameIndex =
        "CREATE INDEX users_by_name_key ON users (name_key, id, email_key, name, email, avatar_url, version)"
    static let v9 = "DROP INDEX IF EXISTS users_by_name_key; " + v9NameIndex

    static let v7ChangeLog = """
        DROP TRIGGER IF EXISTS users_added;
        DROP TRIGGER IF EXISTS users_saved;
        DROP TRIGGER IF EXISTS users_removed;
        """ + changesTable("changes_v7", kinds: ["added", "saved", "removed", "reloaded"]) + """
        INSERT INTO changes_v7 SELECT seq, kind, user_id, name, email, avatar_url, version, at FROM changes;
        DELETE FROM sqlite_sequence WHERE name = 'changes_v7';
        INSERT INTO sqlite_sequence (name, seq) SELECT 'changes_v7', seq FROM sqlite_sequence WHERE name = 'changes';
        DROP TABLE changes;
        ALTER TABLE changes_v7 RENAME TO changes;
        """ + changeLogTriggers

    static let steps: [(version: Int, sql: String)] = [
        (1, v1), (2, v2), (3, v3), (4, v4), (5, v5), (6, v6), (7, v7ChangeLog + SQLiteSearchIndex.v7),
        (8, SQLiteHistory.v8), (9, v9), (10, SQLiteHistoryBatch.v10), (11, SQLiteSearchIndex.v11),
    ]

    /// Users whose email another user had before v4 made emails unique: they keep a suffixed key
    /// (see v4) until someone gives them an address of their own.
    static let duplicateEmails = "SELECT id FROM users WHERE instr(email_key, ' ') > 0"

    /// Brings the file to `currentVersion`. A file from a newer release is refused rather than
    /// misread.
    static func migrate(_ connection: SQLiteConnection) throws(SQLiteError) {
        let found = try connection.integer("PRAGMA user_version", "reading the schema version")
        guard found <= currentVersion else {
            throw .custom("the file has schema version \(found), newer than this program's \(currentVersion); "
                          + "upgrade userlistd",
                          code: SQLITE_ERROR, path: connection.path, operation: "migrating")
        }
        for step in steps where step.version > found {
            let operation = "migrating the schema to version \(step.version)"
            try connection.writeTransaction(operation) { () throws(SQLiteError) in
                // Read again under the write lock: another process may have migrated meanwhile.
                let now = try connection.integer("PRAGMA user_version", "reading the schema version")
                guard now < step.version else { return }
                try connection.execute(step.sql, operation)
                try connection.execute("PRAGMA user_version = \(step.version)", operation)
            }
        }
    }

    /// The version a file is at, for a read-only opener that cannot migrate.
    static func check(_ connection: SQLiteConnection) throws(SQLiteError) {
        let found = try connection.integer("PRAGMA user_version", "reading the schema version")
        guard found == currentVersion else {
            throw .custom("the file has schema version \(found) but this program needs \(currentVersion); "
                          + "open it read-write once to migrate it",
                          code: SQLITE_READONLY, path: connection.path, operation: "opening read-only")
        }
    }
}
