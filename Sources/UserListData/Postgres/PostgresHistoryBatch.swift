import Foundation
import UserListDomain

/// An import in the shared history, as in SQLite (`SQLiteHistoryBatch`): one `history` row for
/// the whole import (`kind = 'imported'`, no user, its source and counts) and one slim row per
/// user it wrote in `history_parts` (the user's kind, the fields before, the version after).
/// The fields after are the next entry's `before` for that user, or the user as stored.
///
/// The import's entry takes its number when the import starts writing, before the change-log
/// lock (an import must not hold every other save up while it writes): so its number can be
/// lower than an entry another daemon committed meanwhile. A history screen asking for entries
/// newer than the newest it has may miss such an import until it reads again.
enum PostgresHistoryBatch {
    /// v4: `history` takes whole imports; `history_parts`.
    static let v4 = """
        ALTER TABLE history ALTER COLUMN user_id DROP NOT NULL;
        ALTER TABLE history DROP CONSTRAINT IF EXISTS history_kind_check;
        ALTER TABLE history ADD CONSTRAINT history_kind_check CHECK (kind IN ('added', 'saved', 'removed', 'imported'));
        ALTER TABLE history ADD COLUMN source text, ADD COLUMN added integer, ADD COLUMN updated integer,
            ADD COLUMN removed integer;
        CREATE TABLE history_parts (
            entry             bigint NOT NULL,
            user_id           uuid NOT NULL,
            kind              text NOT NULL,
            before_name       text,
            before_email      text,
            before_avatar_url text,
            version_after     integer,
            PRIMARY KEY (entry, user_id)
        );
        CREATE INDEX history_parts_by_user ON history_parts (user_id, entry);
        CREATE INDEX history_by_reverts ON history (reverts) WHERE reverts IS NOT NULL;
        """

    /// Starts a batch's entry with its counts at zero; returns its number.
    static func begin(_ author: ChangeAuthor, _ connection: PGConnection,
                      _ operation: String) throws(PGError) -> Int64 {
        let row = try connection.query("""
            INSERT INTO history (via, actor_uid, actor_name, client, daemon, reverts, kind, source, added, updated,
                                 removed)
            VALUES ($1, $2::bigint, $3, $4, $5, $6::bigint, 'imported', $7, 0, 0, 0) RETURNING entry
            """, PostgresHistory.parameters(author) + [author.source], operation).first
        return Int64(row?[0] ?? "") ?? 0
    }

    /// Sets the entry's counts, or deletes it when the import wrote nothing.
    static func finish(_ entry: Int64, added: Int, updated: Int, removed: Int = 0,
                       _ connection: PGConnection, _ operation: String) throws(PGError) {
        if added + updated + removed == 0 {
            try connection.query("DELETE FROM history WHERE entry = $1::bigint", [String(entry)], operation)
            return
        }
        try connection.query("UPDATE history SET added = $2, updated = $3, removed = $4 WHERE entry = $1::bigint",
                             [String(entry), String(added), String(updated), String(removed)], operation)
    }
}
