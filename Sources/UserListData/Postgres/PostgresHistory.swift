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

    /// Records one change of user `id` with its fields before and after (nil: it did not
    /// exist). Called once the write has happened, with the row it found locked, so the entry
    /// says what the write did: a write that loses a race records nothing.
    static func record(_ kind: String, id: UUID, before: User?, after: User?, _ author: ChangeAuthor,
                       _ connection: PGConnection, _ operation: String) throws(PGError) {
        try connection.query(insertColumns + """
             VALUES ($1, $2::bigint, $3, $4, $5, $6::bigint, $7, $8, $9, $10, $11, $12, $13, $14, $15::integer)
            """, parameters(author) + [id.uuidString, kind, before?.name, before?.email, before?.avatarURL,
                                       after?.name, after?.email, after?.avatarURL, after.map { String($0.version) }],
            operation)
    }
}
