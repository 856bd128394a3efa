/// The substring-search index (`users_search`, schema v5): a contentless FTS5 table with the
/// trigram tokenizer, one row per user under the user's rowid, holding
/// `name_key || char(10) || email_key` (the folded keys, so the index is case-, accent- and
/// width-insensitive exactly as `TextKey` is).
///
/// Contentless (`content=''`) and `detail=none`: it keeps only which rows hold which trigram,
/// the smallest FTS5 index there is. It can therefore answer "rows holding all of these
/// trigrams", a superset of the substring matches, and `SQLiteSearch` keeps the real ones with
/// `instr` on the keys. Deleting from a contentless table needs the old text, which the
/// triggers have (`OLD.name_key`, `OLD.email_key`).
///
/// The backlog (schema v7): `store_state.search_indexed_through` is a rowid such that every
/// user up to it is in the index and none after it is; NULL when every user is. Building the
/// index is a third of a bulk load's time (6 of 18 s at 1M users), so a bulk load empties the
/// index and sets the mark to 0 instead, and the index catches up afterwards in slices of a few
/// thousand rows (`catchUp`), each its own short transaction, so other writers get their turn
/// between them. Meanwhile a search also checks the users past the mark (`SQLiteSearch`): the
/// answers are the same, only slower, for the seconds the backlog lasts. The triggers and the
/// import leave users past the mark alone; the slice that reaches them reads their keys then.
///
/// Stale entries (schema v11): `search_stale` lists users at or before the mark whose entry
/// still holds an older key (`indexed_key`): an import's merge renames thousands of users, and
/// replacing each one's entry from a trigger cost 67 µs a user (FTS5 writes its pending data out
/// at every rowid that is not above the last), two of the merge's nine seconds at 30,000
/// renames. So the merge lists them instead, the triggers leave listed users alone, and the
/// catch-up replaces their entries in rowid order, before it indexes the users past the mark.
/// The mark stays set while any are listed, and a search also reads the listed users.
enum SQLiteSearchIndex {
    static let triggerNames = ["users_search_added", "users_search_saved", "users_search_removed"]

    /// The mark as the triggers read it: past every rowid when there is no backlog.
    private static let indexedThrough =
        "(SELECT ifnull(search_indexed_through, 9223372036854775807) FROM store_state WHERE only = 1)"

    /// Keeps the index in step with every writer (this process, another, hand-written SQL).
    static let createTriggers = triggers(skipping: { rowid in "AND NOT EXISTS (\(staleEntry(rowid)))" })

    /// The triggers, each also leaving alone the rows `skipping` names (a further WHEN
    /// condition on the rowid it is given).
    private static func triggers(skipping: (String) -> String) -> String {
        """
        CREATE TRIGGER users_search_added AFTER INSERT ON users
        WHEN NEW.rowid <= \(indexedThrough) \(skipping("NEW.rowid")) BEGIN
            INSERT INTO users_search (rowid, key) VALUES (NEW.rowid, NEW.name_key || char(10) || NEW.email_key);
        END;
        CREATE TRIGGER users_search_saved AFTER UPDATE OF name_key, email_key ON users
        WHEN (OLD.name_key IS NOT NEW.name_key OR OLD.email_key IS NOT NEW.email_key)
             AND OLD.rowid <= \(indexedThrough) \(skipping("OLD.rowid")) BEGIN
            INSERT INTO users_search (users_search, rowid, key)
                VALUES ('delete', OLD.rowid, OLD.name_key || char(10) || OLD.email_key);
            INSERT INTO users_search (rowid, key) VALUES (NEW.rowid, NEW.name_key || char(10) || NEW.email_key);
        END;
        CREATE TRIGGER users_search_removed AFTER DELETE ON users
        WHEN OLD.rowid <= \(indexedThrough) \(skipping("OLD.rowid")) BEGIN
            INSERT INTO users_search (users_search, rowid, key)
                VALUES ('delete', OLD.rowid, OLD.name_key || char(10) || OLD.email_key);
        END;
        """
    }

    private static let dropTriggers = """
        DROP TRIGGER IF EXISTS users_search_added;
        DROP TRIGGER IF EXISTS users_search_saved;
        DROP TRIGGER IF EXISTS users_search_removed;
        """

    /// Schema v7: the mark, and the triggers that respect it (as v7 wrote them).
    static let v7 = """
        ALTER TABLE store_state ADD COLUMN search_indexed_through INTEGER;
        """ + dropTriggers + triggers(skipping: { _ in "" })

    /// Schema v11: the stale entries, and the triggers that leave them to the catch-up.
    static let v11 = """
        CREATE TABLE search_stale (user_rowid INTEGER PRIMARY KEY, indexed_key TEXT NOT NULL);
        """ + dropTriggers + createTriggers

    /// A query naming `rowid` if its entry is stale.
    static func staleEntry(_ rowid: String) -> String { "SELECT 1 FROM search_stale WHERE user_rowid = \(rowid)" }

    /// The mark, or nil when every user is indexed.
    static func indexedThrough(_ connection: SQLiteConnection, _ operation: String) throws(SQLiteError) -> Int? {
        let statement = try connection.statement("SELECT search_indexed_through FROM store_state WHERE only = 1")
        defer { statement.reset() }
        guard try statement.step(operation), !statement.isNull(0) else { return nil }
        return statement.int(0)
    }

    /// Sets the mark (nil: every user is indexed). A merge that leaves the users it adds to the
    /// catch-up sets it to the last rowid before it writes, when no backlog was left already.
    static func setIndexedThrough(_ rowid: Int?, _ connection: SQLiteConnection,
                                  _ operation: String) throws(SQLiteError) {
        let statement = try connection.statement("UPDATE store_state SET search_indexed_through = ?1 WHERE only = 1")
        defer { statement.reset() }
        statement.bind(1, rowid)
        try statement.run(operation)
    }

    /// Empties the index and puts every user in the backlog: a bulk load's first step, inside
    /// its transaction.
    static func startOver(_ connection: SQLiteConnection, _ operation: String) throws(SQLiteError) {
        try connection.execute("""
            INSERT INTO users_search (users_search) VALUES ('delete-all');
            DELETE FROM search_stale;
            UPDATE store_state SET search_indexed_through = 0 WHERE only = 1;
            """, operation)
    }

    static let catchUpOperation = "indexing users for search"

    /// Replaces the next `rows` stale entries or, once none is left, indexes the next `rows`
    /// users past the mark, in one transaction, in rowid order (FTS5 writes its pending data out
    /// whenever a rowid is not above the last one). Returns true once nothing is left, the mark
    /// then cleared.
    static func catchUp(_ connection: SQLiteConnection, rows: Int) throws(SQLiteError) -> Bool {
        try connection.writeTransaction(catchUpOperation) { () throws(SQLiteError) -> Bool in
            guard let through = try indexedThrough(connection, catchUpOperation) else { return true }
            if try replaceStale(connection, rows: rows) { return false }
            let last = try connection.integer("SELECT ifnull(max(rowid), 0) FROM users", catchUpOperation)
            let upper = min(through + rows, last)
            if upper > through {
                let fill = try connection.statement("""
                    INSERT INTO users_search (rowid, key)
                    SELECT rowid, name_key || char(10) || email_key FROM users
                    WHERE rowid > ?1 AND rowid <= ?2 ORDER BY rowid
                    """)
                fill.bind(1, through)
                fill.bind(2, upper)
                try fill.run(catchUpOperation)
            }
            let mark = try connection.statement(
                "UPDATE store_state SET search_indexed_through = CASE WHEN ?1 >= ?2 THEN NULL ELSE ?1 END "
                + "WHERE only = 1")
            mark.bind(1, upper)
            mark.bind(2, last)
            try mark.run(catchUpOperation)
            return upper >= last
        }
    }

    /// Replaces the first `rows` stale entries (by rowid) with their users' keys; a user removed
    /// meanwhile only loses its entry. False when none was stale.
    private static func replaceStale(_ connection: SQLiteConnection, rows: Int) throws(SQLiteError) -> Bool {
        guard try connection.integer("SELECT EXISTS (SELECT 1 FROM search_stale)", catchUpOperation) == 1 else {
            return false
        }
        let batch = "SELECT user_rowid FROM search_stale ORDER BY user_rowid LIMIT ?1"
        let steps = [
            """
            INSERT INTO users_search (users_search, rowid, key)
            SELECT 'delete', user_rowid, indexed_key FROM search_stale ORDER BY user_rowid LIMIT ?1
            """,
            """
            INSERT INTO users_search (rowid, key)
            SELECT rowid, name_key || char(10) || email_key FROM users WHERE rowid IN (\(batch)) ORDER BY rowid
            """,
            "DELETE FROM search_stale WHERE user_rowid IN (\(batch))",
        ]
        for sql in steps {
            let statement = try connection.statement(sql)
            statement.bind(1, rows)
            try statement.run(catchUpOperation)
        }
        return true
    }

    /// The indexed text of a user's keys.
    static func key(name: String, email: String) -> String { name + "\n" + email }
}
