import CSQLite
import Foundation
import UserListDomain

/// The checks a staged import passes before its merge writes anything (`SQLiteImportMerge`):
/// set queries over the staged entries and the store, so the merge itself cannot be refused
/// half-way, and the first bad entry is named by its position in the file whatever order the
/// merge writes in. They only read: the daemon runs them on a connection of their own, beside
/// the sort and fill that make the import's guard (`SQLiteImportGuard`) whole; from then on it
/// keeps what they read from changing, and a write that came first has them run again
/// (`SQLiteUserRepository.sortFillAndCheck`).
///
/// - An email address another stored user has (compared folded, as the unique index does),
///   even if the file changes that user's address too: the rule that keeps every order of
///   writing the entries free of a unique-index violation.
/// - An email address two entries with different ids give: the later entry is refused.
/// - A `version` older than the stored one: the user changed after the file was made.
enum SQLiteImportValidation {
    static let operation = "checking an import"

    /// Throws `.refused(.rejectedEntry)` for the first bad entry of import `id`, if any.
    static func check(_ id: Int, _ connection: SQLiteConnection) throws(SQLiteError) {
        var first: (position: Int, id: UUID, reason: String)?
        func consider(_ position: Int, _ entry: String, _ reason: String) {
            guard let uuid = UUID(uuidString: entry), first.map({ position < $0.position }) ?? true else { return }
            first = (position, uuid, reason)
        }
        try each(id, connection, """
            SELECT s.position, s.id, s.email, u.id, u.name
            FROM import_staged s JOIN users u ON u.email_key = s.email_key
            WHERE s.import_id = ?1 AND u.id != s.id ORDER BY s.position LIMIT 1
            """) { row in
            consider(row.int(0), row.text(1),
                     "the email address “\(row.text(2))” is already used by “\(row.text(4))” "
                     + "(id \(row.text(3).lowercased())); each user needs an address of their own.")
        }
        // The exact query below ranks every entry by address (seconds at 300,000 entries); this
        // one only asks whether any address comes with two ids, which is rare.
        if try boolean(id, connection, """
            SELECT EXISTS (SELECT 1 FROM import_staged WHERE import_id = ?1
                           GROUP BY email_key HAVING min(id) != max(id))
            """) {
            try each(id, connection, """
                WITH firsts AS (SELECT email_key, id, email, MIN(position) AS position FROM import_staged
                                WHERE import_id = ?1 GROUP BY email_key, id),
                     ranked AS (SELECT id, email, position, ROW_NUMBER() OVER byKey AS n,
                                       FIRST_VALUE(position) OVER byKey AS earlier
                                FROM firsts WINDOW byKey AS (PARTITION BY email_key ORDER BY position))
                SELECT position, id, email, earlier FROM ranked WHERE n = 2 ORDER BY position LIMIT 1
                """) { row in
                consider(row.int(0), row.text(1),
                         "the email address “\(row.text(2))” is also given to another user, "
                         + "by entry \(row.int(3)); each user needs an address of their own.")
            }
        }
        try each(id, connection, """
            SELECT s.position, s.id, s.expected_version, u.version FROM import_staged s JOIN users u ON u.id = s.id
            WHERE s.import_id = ?1 AND s.expected_version IS NOT NULL AND s.expected_version < u.version
            ORDER BY s.position LIMIT 1
            """) { row in
            consider(row.int(0), row.text(1),
                     "it names version \(row.int(2)) of this user, but the store holds version \(row.int(3)): "
                     + "the user was changed after the file was made (export again, or drop \"version\" to overwrite).")
        }
        if let first { throw .refused(.rejectedEntry(position: first.position, id: first.id, reason: first.reason)) }
    }

    /// `check`'s refusal as a value (nil: the import may be merged); store failures still throw.
    static func refusal(_ id: Int, _ connection: SQLiteConnection) throws(SQLiteError) -> UserError? {
        do {
            try check(id, connection)
            return nil
        } catch {
            guard let refusal = error.refusal else { throw error }
            return refusal
        }
    }

    /// The change log's last `seq` (`AUTOINCREMENT`: it never goes back, even when the log is
    /// trimmed); 0 before the first change.
    static func lastChange(_ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        try connection.integer("SELECT ifnull((SELECT seq FROM sqlite_sequence WHERE name = 'changes'), 0)",
                               operation)
    }

    private static func boolean(_ id: Int, _ connection: SQLiteConnection, _ sql: String) throws(SQLiteError) -> Bool {
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        statement.bind(1, id)
        return try statement.step(operation) && statement.int(0) != 0
    }

    private static func each(_ id: Int, _ connection: SQLiteConnection, _ sql: String,
                             _ body: (SQLiteStatement) -> Void) throws(SQLiteError) {
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        statement.bind(1, id)
        while try statement.step(operation) { body(statement) }
    }
}
