import Foundation
import Synchronization
import UserListDomain
import ThreadLocks

/// Imports and exports of many users at once.
extension PostgresUserRepository {
    /// Rows per import statement (sent as one JSON parameter).
    package static let importBatch = 2_000
    /// Imports at least this large refresh the planner's statistics.
    static let analyzeAfter = 10_000

    /// Writes `users`, inserting new ids and updating stored ones, in one transaction: all or
    /// nothing. A user whose data changes gets the stored version + 1 (or the given one, if
    /// higher), as the SQLite store does; one whose data is the same is left alone unless the
    /// given version is higher (it never goes down), and announces nothing. Each inserted or changed
    /// row gets a change-log row with its snapshot. Returns how many rows were inserted or changed.
    /// A later entry with the same id wins, as if applied in order.
    public func importUsers(_ users: [User]) async throws(UserError) -> Int {
        try await importUsers(users, by: ChangeAuthor(uid: nil, via: .import))
    }

    public func importUsers(_ users: [User], by author: ChangeAuthor) async throws(UserError) -> Int {
        var lastIndex: [UUID: Int] = [:]
        for (index, user) in users.enumerated() { lastIndex[user.id] = index }
        let unique = users.enumerated().filter { lastIndex[$0.element.id] == $0.offset }.map(\.element)
        let outcome = try await write("importing users", { connection throws(PGError) -> Outcome in
            let operation = "importing users"
            // Its statements log their changes as they write (store-level bulk path): the lock first.
            try PostgresSchema.lockChangeLog(connection, operation)
            // One entry for the import; each user's part from the batch joined to `users` as they
            // were when the statement began, with the upsert's own rules (never a join of two
            // CTEs: no statistics, a nested loop).
            let entry = String(try PostgresHistoryBatch.begin(author.via(.import), connection, operation))
            let (written, inserted) = try Self.upsertBatches(unique, entry: entry, connection, operation)
            try PostgresHistoryBatch.finish(Int64(entry) ?? 0, added: inserted, updated: written - inserted,
                                            connection, operation)
            try Self.afterImport(written: written, inserted: inserted, connection, operation)
            return .done(User(id: UUID(), name: "", email: "", version: written), seq: 0)
        }, email: nil)
        switch outcome {
        case .done(let summary, _):
            if summary.version > 0 { notifyCommitted(PostgresCommit(seq: 0, change: nil)) }
            return summary.version
        case .emailTaken:
            throw .validation(field: .email,
                              message: "The import gives one email to two users "
                                  + "(emails are unique, whatever their case).")
        default:
            throw .unavailable(reason: "\(connection.redacted): the import did not complete")
        }
    }

    /// `users` upserted `importBatch` at a time, each batch's changes logged and its history parts
    /// written by the same statement; returns how many rows were written and how many inserted.
    private static func upsertBatches(_ users: [User], entry: String, _ connection: PGConnection,
                                      _ operation: String) throws(PGError) -> (written: Int, inserted: Int) {
        var written = 0, inserted = 0
        var start = 0
        while start < users.count {
            let batch = users[start..<min(users.count, start + importBatch)]
            start += batch.count
            let row = try connection.query(upsertSQL, [json(batch), entry], operation).first
            written += Int(row?[0] ?? "0") ?? 0
            inserted += Int(row?[1] ?? "0") ?? 0
        }
        return (written, inserted)
    }

    /// One batch ($1, JSON) as entry $2: the upsert, its change-log rows and its history parts.
    private static let upsertSQL = """
        WITH input AS (
            SELECT * FROM json_to_recordset($1::json)
                AS t(id uuid, name text, email text, avatar_url text, version integer, name_key text,
                     email_key text)
        ), up AS (
            INSERT INTO users AS u (id, name, email, avatar_url, version, name_key, email_key)
            SELECT id, name, email, avatar_url, version, name_key, email_key FROM input
            ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, email = EXCLUDED.email,
                avatar_url = EXCLUDED.avatar_url,
                version = CASE WHEN (u.name, u.email, u.avatar_url)
                                    IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.email, EXCLUDED.avatar_url)
                               THEN GREATEST(u.version + 1, EXCLUDED.version) ELSE EXCLUDED.version END,
                name_key = EXCLUDED.name_key, email_key = EXCLUDED.email_key
            WHERE (u.name, u.email, u.avatar_url)
                      IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.email, EXCLUDED.avatar_url)
                  OR EXCLUDED.version > u.version
            RETURNING u.id, u.name, u.email, u.avatar_url, u.version, (xmax = 0) AS inserted
        ), logged AS (
            INSERT INTO changes (kind, user_id, name, email, avatar_url, version)
            SELECT CASE WHEN inserted THEN 'added' ELSE 'saved' END, id, name, email, avatar_url, version
            FROM up
        ), parts AS (
            INSERT INTO history_parts (entry, user_id, kind, before_name, before_email, before_avatar_url,
                                       version_after)
            SELECT $2::bigint, i.id, CASE WHEN u.id IS NULL THEN 'added' ELSE 'saved' END,
                   u.name, u.email, u.avatar_url,
                   CASE WHEN u.id IS NULL THEN i.version
                        WHEN (u.name, u.email, u.avatar_url)
                             IS DISTINCT FROM (i.name, i.email, i.avatar_url)
                        THEN GREATEST(u.version + 1, i.version) ELSE i.version END
            FROM input i LEFT JOIN users u ON u.id = i.id
            WHERE u.id IS NULL OR i.version > u.version
                OR (u.name, u.email, u.avatar_url) IS DISTINCT FROM (i.name, i.email, i.avatar_url)
        )
        SELECT COUNT(*), COUNT(*) FILTER (WHERE inserted) FROM up
        """

    /// The count kept in `store_state`, fresh planner statistics after a large import, and the
    /// notification that wakes the other daemons.
    private static func afterImport(written: Int, inserted: Int, _ connection: PGConnection,
                                    _ operation: String) throws(PGError) {
        if inserted > 0 {
            try connection.query("UPDATE store_state SET user_count = user_count + $1", [String(inserted)],
                                 operation)
        }
        if written >= analyzeAfter {
            // The planner's row estimates, now, not at autovacuum's leisure.
            try connection.execute("ANALYZE users", operation)
        }
        if written > 0 {
            try connection.query("SELECT pg_notify($1, '')", [PostgresSchema.channel], operation)
        }
    }

    private struct ImportRow: Encodable {
        let id: String, name: String, email: String
        let avatar_url: String?
        let version: Int
        let name_key: String, email_key: String
    }

    static func json(_ users: ArraySlice<User>) -> String {
        let rows = users.map {
            ImportRow(id: $0.id.uuidString, name: $0.name, email: $0.email, avatar_url: $0.avatarURL,
                      version: $0.version, name_key: UserKey.fold($0.name), email_key: UserKey.fold($0.email))
        }
        return String(decoding: (try? JSONEncoder().encode(rows)) ?? Data("[]".utf8), as: UTF8.self)
    }

    /// Every user in list order, streamed by one `COPY (SELECT ... ORDER BY name_key, id) TO
    /// STDOUT`: rows arrive as the server reads them, with no per-page query, plan or result set
    /// (libpq holds one row at a time; the users are built as they come).
    public func exportUsers() async throws(UserError) -> [User] {
        try await read { connection throws(PGError) -> [User] in
            var users: [User] = []
            try connection.copyOut("COPY (SELECT \(Self.columns) FROM users ORDER BY name_key, id) TO STDOUT",
                                   "exporting users") { users.append(Self.user($0)) }
            return users
        }
    }

    /// Imports a JSON array of `UserDTO` (the REST shape), validated like the SQLite import.
    public func importJSON(_ data: Data) async throws(UserError) -> Int {
        try await importUsers(try SQLiteUserRepository.validatedImport(data))
    }
}
