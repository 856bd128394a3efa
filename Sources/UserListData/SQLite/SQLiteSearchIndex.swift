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
enum SQLiteSearchIndex {
    static let triggerNames = ["users_search_added", "users_search_saved", "users_search_removed"]

    /// Keeps the index in step with every writer (this process, another, hand-written SQL).
    static let createTriggers = """
        CREATE TRIGGER users_search_added AFTER INSERT ON users BEGIN
            INSERT INTO users_search (rowid, key) VALUES (NEW.rowid, NEW.name_key || char(10) || NEW.email_key);
        END;
        CREATE TRIGGER users_search_saved AFTER UPDATE OF name_key, email_key ON users
        WHEN OLD.name_key IS NOT NEW.name_key OR OLD.email_key IS NOT NEW.email_key BEGIN
            INSERT INTO users_search (users_search, rowid, key) VALUES ('delete', OLD.rowid, OLD.name_key || char(10) || OLD.email_key);
            INSERT INTO users_search (rowid, key) VALUES (NEW.rowid, NEW.name_key || char(10) || NEW.email_key);
        END;
        CREATE TRIGGER users_search_removed AFTER DELETE ON users BEGIN
            INSERT INTO users_search (users_search, rowid, key) VALUES ('delete', OLD.rowid, OLD.name_key || char(10) || OLD.email_key);
        END;
        """

    /// Empties the index and refills it from `users` in one pass (one sorted build instead of a
    /// million small updates), with the triggers dropped: a bulk load's last step. In rowid order
    /// (`NOT INDEXED`: the name index holds both keys, so SQLite would rather read it, in name
    /// order): FTS5 writes out its pending data whenever a rowid is not above the last one, so
    /// rows out of order made a segment each (18 s instead of 6 at 1M users).
    static func refill(_ connection: SQLiteConnection, _ operation: String) throws(SQLiteError) {
        try connection.execute("""
            INSERT INTO users_search (users_search) VALUES ('delete-all');
            INSERT INTO users_search (rowid, key) SELECT rowid, name_key || char(10) || email_key FROM users NOT INDEXED;
            """, operation)
    }

    /// The indexed text of a user's keys.
    static func key(name: String, email: String) -> String { name + "\n" + email }
}
