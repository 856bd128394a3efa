import Foundation
import UserListDomain

/// The history table: one row per change, written by the change's own transaction (so a change
/// is never committed without its entry), numbered by `entry` in commit order.
///
/// Pages are newest first by `entry` (the rowid): everyone's history is a walk down the rowid,
/// one user's a range of `history_by_user`, one actor's a range of `history_by_actor`, so the
/// first page costs the same at any size. Retention's prune needs no index of its own: `at`
/// grows with `entry`, so the entries to delete are the oldest ones, below the first young one.
enum SQLiteHistory {
    static let v8 = """
        CREATE TABLE history (
            entry             INTEGER PRIMARY KEY AUTOINCREMENT,
            at                INTEGER NOT NULL,
            user_id           TEXT NOT NULL,
            kind              TEXT NOT NULL CHECK (kind IN ('added', 'saved', 'removed')),
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
            version_after     INTEGER
        );
        CREATE INDEX history_by_user ON history (user_id, entry);
        CREATE INDEX history_by_actor ON history (actor_uid, entry);
        """

    /// The columns every writer names, in this order: `?1` at, `?2`...`?7` the author (`bind`).
    static let insertColumns = """
        INSERT INTO history (at, via, actor_uid, actor_name, client, daemon, reverts, user_id, kind,
                             before_name, before_email, before_avatar_url, after_name, after_email, after_avatar_url,
                             version_after)
        """

    /// Binds `?1` (now, in milliseconds) and the author as `?2`...`?7`.
    static func bind(_ statement: SQLiteStatement, _ author: ChangeAuthor, at date: Date = Date()) {
        statement.bind(1, milliseconds(date))
        statement.bind(2, author.via.rawValue)
        statement.bind(3, author.uid.map(Int.init))
        statement.bind(4, author.userName)
        statement.bind(5, author.client)
        statement.bind(6, author.daemon)
        statement.bind(7, author.reverting.map(Int.init))
    }

    /// Binds `user`'s name, email and avatar URL from `first` on (an entry's before or after).
    static func bindFields(_ statement: SQLiteStatement, _ user: User, from first: Int32) {
        statement.bind(first, user.name)
        statement.bind(first + 1, user.email)
        statement.bind(first + 2, user.avatarURL)
    }

    static func milliseconds(_ date: Date) -> Int { Int((date.timeIntervalSince1970 * 1000).rounded(.down)) }

    /// A save's entry, every field bound: the save has read the stored row already (its
    /// conflict check), so the entry needs no read of its own (an `INSERT ... SELECT` from
    /// `users` would look the row up a second time). One text, built once: the connection's
    /// statement cache is keyed by the text, and building it per save cost a concatenation
    /// and a hash of it each time.
    static let insertSave = insertColumns + """
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'saved', ?9, ?10, ?11, ?12, ?13, ?14, ?15)
        """

    /// Records the save of `before` (the stored row, at the version the save was made from) as
    /// `user`, in the save's transaction after its UPDATE.
    static func recordSave(_ user: User, before: User, _ author: ChangeAuthor,
                           _ connection: SQLiteConnection) throws(SQLiteError) {
        let statement = try connection.statement(insertSave)
        bind(statement, author)
        statement.bind(8, user.id)
        bindFields(statement, before, from: 9)
        bindFields(statement, user, from: 12)
        statement.bind(15, before.version + 1)
        try statement.run("recording the change in the history")
    }

    static let insertAdd = insertColumns + """
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'added', NULL, NULL, NULL, ?9, ?10, ?11, ?12)
        """

    /// Records an added user (after its INSERT).
    static func recordAdd(_ user: User, _ author: ChangeAuthor, _ connection: SQLiteConnection) throws(SQLiteError) {
        let statement = try connection.statement(insertAdd)
        bind(statement, author)
        statement.bind(8, user.id)
        bindFields(statement, user, from: 9)
        statement.bind(12, user.version)
        try statement.run("recording the change in the history")
    }

    static let insertRemove = insertColumns + """
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, id, 'removed', name, email, avatar_url, NULL, NULL, NULL, NULL
        FROM users WHERE id = ?8
        """

    /// Records the removal of `id` before the DELETE, from the stored row (nothing when absent).
    static func recordRemove(_ id: UUID, _ author: ChangeAuthor, _ connection: SQLiteConnection) throws(SQLiteError) {
        let statement = try connection.statement(insertRemove)
        bind(statement, author)
        statement.bind(8, id)
        try statement.run("recording the change in the history")
    }
}
