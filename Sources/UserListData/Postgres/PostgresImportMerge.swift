import Foundation
import UserListDomain

/// Applies a committed staged import (`PostgresImportStaging`) in one transaction: the checks
/// (`PostgresImportValidation`), the history, one `INSERT ... SELECT ... ON CONFLICT (id) DO
/// UPDATE` from the staging table in id order, and one `reloaded` change-log row, under the
/// change-log lock as every write takes it (so `seq` order stays commit order).
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

    /// Merges import `id`, then drops it. A refused entry rolls back, drops the import and comes
    /// back as `.failure(.rejectedEntry)`; a store failure throws and leaves it committed.
    /// An import already gone (merged by another daemon) is an empty success.
    static func run(_ id: Int, _ connection: PGConnection) throws(PGError) -> Result<Outcome, UserError> {
        let result = try connection.transaction(operation) { () throws(PGError) -> Result<Outcome, UserError> in
            try connection.query("SELECT pg_advisory_xact_lock($1)", [String(PostgresSchema.changeLogLock)], operation)
            guard let row = try connection.query("SELECT entries, author FROM imports WHERE id = $1 AND state = 'committed' FOR UPDATE",
                                                 [String(id)], operation).first else { return .success(Outcome()) }
            if let refusal = try PostgresImportValidation.firstRejection(id, connection) { return .failure(refusal) }
            let outcome = try merge(id, author: row[1] ?? nil, read: Int(row[0] ?? "0") ?? 0, connection)
            try PostgresImportStaging.drop(id: id, onlyStaging: false, connection)
            return .success(outcome)
        }
        if case .failure = result {
            try connection.transaction(operation) { () throws(PGError) in
                try PostgresImportStaging.drop(id: id, onlyStaging: false, connection)
            }
        }
        return result
    }

    private static func merge(_ id: Int, author: String?, read: Int, _ connection: PGConnection) throws(PGError) -> Outcome {
        let parameters = [String(id)]
        if let author, let decoded = try? JSONDecoder().decode(ChangeAuthor.self, from: Data(author.utf8)) {
            try recordHistory(id, decoded, connection)
        }
        let counts = try connection.query("""
            WITH latest AS (
                SELECT DISTINCT ON (id) id, name, email, avatar_url, expected_version, name_key, email_key
                FROM import_staged WHERE import_id = $1 ORDER BY id, position DESC
            ), up AS (
                INSERT INTO users AS u (id, name, email, avatar_url, version, name_key, email_key)
                SELECT id, name, email, avatar_url, COALESCE(expected_version, 1), name_key, email_key FROM latest ORDER BY id
                ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, email = EXCLUDED.email, avatar_url = EXCLUDED.avatar_url,
                    version = GREATEST(u.version + 1, EXCLUDED.version),
                    name_key = EXCLUDED.name_key,
                    email_key = CASE WHEN u.email = EXCLUDED.email THEN u.email_key ELSE EXCLUDED.email_key END
                WHERE (u.name, u.email, u.avatar_url) IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.email, EXCLUDED.avatar_url)
                RETURNING (xmax = 0) AS inserted
            )
            SELECT COUNT(*), COUNT(*) FILTER (WHERE inserted) FROM up
            """, parameters, operation).first
        let written = Int(counts?[0] ?? "0") ?? 0, inserted = Int(counts?[1] ?? "0") ?? 0
        if inserted > 0 {
            try connection.query("UPDATE store_state SET user_count = user_count + $1", [String(inserted)], operation)
        }
        if written > 0 {
            try connection.query("INSERT INTO changes (kind, user_id) VALUES ('reloaded', $1)", [PostgresImportSchema.everyone], operation)
            try connection.query("SELECT pg_notify($1, '')", [PostgresSchema.channel], operation)
        }
        if written >= PostgresUserRepository.analyzeAfter {
            try connection.execute("ANALYZE users", operation)  // the planner's estimates now, not at autovacuum's leisure
        }
        return Outcome(read: read, written: written)
    }

    /// One entry per user the import adds or changes, set-based from the staged entries against
    /// `users` before the merge writes (the last entry of an id is the one merged), with the
    /// user after and the version the merge gives it. An import keeps no before-image.
    private static func recordHistory(_ id: Int, _ author: ChangeAuthor, _ connection: PGConnection) throws(PGError) {
        try connection.query(PostgresHistory.insertColumns + """
             SELECT $1, $2::bigint, $3, $4, $5, $6::bigint, s.id, CASE WHEN u.id IS NULL THEN 'added' ELSE 'saved' END,
                   NULL, NULL, NULL, s.name, s.email, s.avatar_url,
                   CASE WHEN u.id IS NULL THEN COALESCE(s.expected_version, 1) ELSE GREATEST(u.version + 1, COALESCE(s.expected_version, 1)) END
            FROM (SELECT DISTINCT ON (id) id, name, email, avatar_url, expected_version
                  FROM import_staged WHERE import_id = $7 ORDER BY id, position DESC) s
            LEFT JOIN users u ON u.id = s.id
            WHERE u.id IS NULL OR (u.name, u.email, u.avatar_url) IS DISTINCT FROM (s.name, s.email, s.avatar_url)
            ORDER BY s.id
            """, PostgresHistory.parameters(author.via(.import)) + [String(id)], operation)
    }
}
