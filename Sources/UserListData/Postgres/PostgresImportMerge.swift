import Foundation
import UserListDomain

/// Applies a committed staged import (`PostgresImportStaging`) in one transaction: the checks
/// (`PostgresImportValidation`), the history, one `INSERT ... SELECT ... ON CONFLICT (id) DO
/// UPDATE` from the staging table in id order, and one `reloaded` change-log row. The import's
/// `imports` row goes in the same transaction; its staged rows and `ANALYZE` come after the
/// reply (`PostgresImportCleanup`), being nobody's business once the merge has committed.
///
/// Other clients' saves go on while it merges: it takes the change-log lock only once its rows
/// are written (`PostgresSchema.lockChangeLog`), so only a save of a user the import writes
/// waits for it. What the checks read stays true until the commit: the users whose entries name
/// a version are locked first (`FOR UPDATE`), so none of them changes between the version check
/// and the merge; a user saved meanwhile by an entry naming no version is written after that
/// save (the import comes later); and an email another client takes meanwhile fails the merge's
/// unique index, which refuses the whole import (`emailTakenMeanwhile`) rather than half of it.
///
/// Versions are honest, as in SQLite's staged merge: a new user gets the version its entry
/// names (or 1); a changed one the stored version + 1 (or the named one, if higher); an
/// unchanged one is not written (the `WHERE` on the DO UPDATE), whatever version it names. The
/// last entry of an id given twice wins (`DISTINCT ON (id) ... ORDER BY position DESC`).
enum PostgresImportMerge {
    struct Outcome: Sendable {
        var read = 0
        var written = 0
    }

    static let operation = "merging an import"

    /// Merges import `id`, then forgets it (its `imports` row; the caller cleans the staged rows
    /// up). A refused entry rolls back, forgets the import and comes back as
    /// `.failure(.rejectedEntry)`; a store failure throws and leaves it committed.
    /// An import already gone (merged by another daemon) is an empty success.
    static func run(_ id: Int, _ connection: PGConnection) throws(PGError) -> Result<Outcome, UserError> {
        let result: Result<Outcome, UserError>
        do throws(PGError) {
            result = try connection.transaction(operation) { () throws(PGError) -> Result<Outcome, UserError> in
                guard let row = try connection.query(
                    "SELECT entries, author FROM imports WHERE id = $1 AND state = 'committed' FOR UPDATE",
                    [String(id)], operation).first else { return .success(Outcome()) }
                try connection.query(lockVersionedUsers, [String(id)], operation)
                if let refusal = try PostgresImportValidation.firstRejection(id, connection) {
                    return .failure(refusal)
                }
                let outcome = try merge(id, author: row[1] ?? nil, read: Int(row[0] ?? "0") ?? 0, connection)
                try PostgresImportCleanup.forget(id, connection)
                return .success(outcome)
            }
        } catch where error.isUniqueViolation && error.constraint == "users_email_key_unique" {
            result = .failure(emailTakenMeanwhile)
        }
        if case .failure = result {
            try connection.transaction(operation) { () throws(PGError) in
                try PostgresImportCleanup.forget(id, connection)
            }
        }
        return result
    }

    private static func merge(_ id: Int, author: String?, read: Int,
                              _ connection: PGConnection) throws(PGError) -> Outcome {
        let author = author.flatMap { try? JSONDecoder().decode(ChangeAuthor.self, from: Data($0.utf8)) }
        // One history entry for the import (`PostgresHistoryBatch`); each user's part from the
        // entries joined to `users` as they were when the statement began (every part of a WITH
        // shares one snapshot), with the upsert's own rules for what it writes and which version:
        // a join of the staged rows to the indexed table, never of two CTEs (which have no
        // statistics: the planner joined the upsert's 100,000 rows to the stored ones in a
        // nested loop, minutes). Without an author (a store-level import) none is kept.
        let entry = try author.map { author throws(PGError) in
            try PostgresHistoryBatch.begin(author.via(.import), connection, operation)
        }
        let history = entry == nil ? "" : """
            , parts AS (
                INSERT INTO history_parts (entry, user_id, kind, before_name, before_email, before_avatar_url,
                                           version_after)
                SELECT $2::bigint, l.id, CASE WHEN u.id IS NULL THEN 'added' ELSE 'saved' END,
                       u.name, u.email, u.avatar_url,
                       CASE WHEN u.id IS NULL THEN COALESCE(l.expected_version, 1)
                            ELSE GREATEST(u.version + 1, COALESCE(l.expected_version, 1)) END
                FROM latest l LEFT JOIN users u ON u.id = l.id
                WHERE u.id IS NULL
                    OR (u.name, u.email, u.avatar_url) IS DISTINCT FROM (l.name, l.email, l.avatar_url)
            )
            """
        let counts = try connection.query("""
            WITH latest AS (
                SELECT DISTINCT ON (id) id, name, email, avatar_url, expected_version, name_key, email_key
                FROM import_staged WHERE import_id = $1 ORDER BY id, position DESC
            ), up AS (
                INSERT INTO users AS u (id, name, email, avatar_url, version, name_key, email_key)
                SELECT id, name, email, avatar_url, COALESCE(expected_version, 1), name_key, email_key
                FROM latest ORDER BY id
                ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, email = EXCLUDED.email,
                    avatar_url = EXCLUDED.avatar_url,
                    version = GREATEST(u.version + 1, EXCLUDED.version),
                    name_key = EXCLUDED.name_key,
                    email_key = CASE WHEN u.email = EXCLUDED.email THEN u.email_key ELSE EXCLUDED.email_key END
                WHERE (u.name, u.email, u.avatar_url)
                      IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.email, EXCLUDED.avatar_url)
                RETURNING u.id, u.version, (xmax = 0) AS inserted
            )\(history)
            SELECT COUNT(*), COUNT(*) FILTER (WHERE inserted) FROM up
            """, [String(id)] + (entry.map { [String($0)] } ?? []), operation).first
        let written = Int(counts?[0] ?? "0") ?? 0, inserted = Int(counts?[1] ?? "0") ?? 0
        if let entry {
            try PostgresHistoryBatch.finish(entry, added: inserted, updated: written - inserted, connection, operation)
        }
        if written > 0 { try logReload(inserted: inserted, connection) }
        return Outcome(read: read, written: written)
    }

    /// The rows are written: now the log, in commit order (the count, one `reloaded` change, NOTIFY).
    private static func logReload(inserted: Int, _ connection: PGConnection) throws(PGError) {
        try PostgresSchema.lockChangeLog(connection, operation)
        if inserted > 0 {
            try connection.query("UPDATE store_state SET user_count = user_count + $1", [String(inserted)], operation)
        }
        try connection.query("INSERT INTO changes (kind, user_id) VALUES ('reloaded', $1)",
                             [PostgresImportSchema.everyone], operation)
        try connection.query("SELECT pg_notify($1, '')", [PostgresSchema.channel], operation)
    }

    /// Locks the stored users whose entries name a version, in id order, before the checks read
    /// their versions: no save can change one of them until the import commits.
    static let lockVersionedUsers = """
        SELECT 1 FROM users
        WHERE id IN (SELECT id FROM import_staged WHERE import_id = $1 AND expected_version IS NOT NULL)
        ORDER BY id FOR UPDATE
        """

    /// An email the checks found free was taken by another client's save while the merge ran:
    /// the whole import is refused, as any duplicate email refuses it.
    static let emailTakenMeanwhile = UserError.validation(field: .email, message:
        "Another client gave one of the file's email addresses to a user while the import was being applied; "
        + "nothing was imported. Run the import again to see which entry.")
}
