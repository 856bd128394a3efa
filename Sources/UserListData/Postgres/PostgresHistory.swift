import Foundation
import UserListDomain

/// The history table in PostgreSQL (schema v2), shared by every daemon on the database: one
/// row per change, written by the change's own transaction, under the change-log lock, so
/// `entry` order is commit order across daemons. The same indexes as SQLite's
/// (`SQLiteHistory`) keep each page one index range.
enum PostgresHistory {
    static let v2 = """
        CREATE TABLE history (
            entry             bigserial PRIMARY KEY,
            at                timestamptz NOT NULL DEFAULT now(),
            user_id           uuid NOT NULL,
            kind              text NOT NULL CHECK (kind IN ('added', 'saved', 'removed')),
            via               text NOT NULL,
            actor_uid         bigint,
            actor_name        text,
            client            text,
            daemon            text,
            reverts           bigint,
            before_name       text,
            before_email      text,
            before_avatar_url text,
            after_name        text,
            after_email       text,
            after_avatar_url  text,
            version_after     integer
        );
        CREATE INDEX history_by_user ON history (user_id, entry);
        CREATE INDEX history_by_actor ON history (actor_uid, entry);
        CREATE INDEX history_by_at ON history (at);
        """

    /// `$1`...`$6` are the author (`parameters`).
    static let insertColumns = """
        INSERT INTO history (via, actor_uid, actor_name, client, daemon, reverts, user_id, kind,
                             before_name, before_email, before_avatar_url, after_name, after_email, after_avatar_url,
                             version_after)
        """

    static func parameters(_ author: ChangeAuthor) -> [String?] {
        [author.via.rawValue, author.uid.map { String($0) }, author.userName, author.client, author.daemon,
         author.reverting.map { String($0) }]
    }

    /// The save's condition that the row changes: a save of what is stored writes nothing.
    /// `IS DISTINCT FROM`: an avatar URL going to or from NULL is a change.
    static func differs(name: String = "$1", email: String = "$2", avatarURL: String = "$3") -> String {
        "(name IS DISTINCT FROM \(name) OR email IS DISTINCT FROM \(email) OR avatar_url IS DISTINCT FROM \(avatarURL))"
    }

    static let differsFromStored = differs()

    /// Before the UPDATE: inserts nothing when the version no longer matches or nothing changes.
    static func recordSave(_ user: User, _ author: ChangeAuthor, _ connection: PGConnection,
                           _ operation: String) throws(PGError) {
        try connection.query(insertColumns + """
             SELECT $1, $2::bigint, $3, $4, $5, $6::bigint, id, 'saved', name, email, avatar_url, $7, $8, $9,
                    version + 1
            FROM users WHERE id = $10 AND version = $11 AND \(differs(name: "$7", email: "$8", avatarURL: "$9"))
            """, parameters(author) + [user.name, user.email, user.avatarURL, user.id.uuidString, String(user.version)],
            operation)
    }

    static func recordAdd(_ user: User, _ author: ChangeAuthor, _ connection: PGConnection,
                          _ operation: String) throws(PGError) {
        try connection.query(insertColumns + """
             VALUES ($1, $2::bigint, $3, $4, $5, $6::bigint, $7, 'added', NULL, NULL, NULL, $8, $9, $10, $11::integer)
            """, parameters(author) + [user.id.uuidString, user.name, user.email, user.avatarURL, String(user.version)],
            operation)
    }

    /// Before the DELETE, from the stored row.
    static func recordRemove(_ id: UUID, _ author: ChangeAuthor, _ connection: PGConnection,
                             _ operation: String) throws(PGError) {
        try connection.query(insertColumns + """
             SELECT $1, $2::bigint, $3, $4, $5, $6::bigint, id, 'removed', name, email, avatar_url,
                    NULL, NULL, NULL, NULL
            FROM users WHERE id = $7
            """, parameters(author) + [id.uuidString], operation)
    }
}
