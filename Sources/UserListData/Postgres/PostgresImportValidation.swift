import Foundation
import UserListDomain

/// The checks a staged PostgreSQL import passes before its merge writes anything
/// (`PostgresImportMerge`): the same three set queries as SQLite's (`SQLiteImportValidation`),
/// with the same wording, so the file's first bad entry is named the same on both stores and
/// the one `INSERT ... ON CONFLICT` cannot be refused half-way.
enum PostgresImportValidation {
    static let operation = "checking an import"

    /// The first bad entry of import `id` (by position in the file), if any.
    static func firstRejection(_ id: Int, _ connection: PGConnection) throws(PGError) -> UserError? {
        var first: (position: Int, id: UUID, reason: String)?
        func consider(_ row: [String?]?, _ reason: ([String?]) -> String) {
            guard let row, let position = row[0].flatMap({ Int($0) }), let uuid = UUID(uuidString: row[1] ?? ""),
                  first.map({ position < $0.position }) ?? true else { return }
            first = (position, uuid, reason(row))
        }
        let parameters = [String(id)]
        consider(try connection.query("""
            SELECT s.position, s.id, s.email, u.id, u.name
            FROM import_staged s JOIN users u ON u.email_key = s.email_key
            WHERE s.import_id = $1 AND u.id <> s.id ORDER BY s.position LIMIT 1
            """, parameters, operation).first) { row in
            "the email address “\(row[2] ?? "")” is already used by “\(row[4] ?? "")” "
                + "(id \((row[3] ?? "").lowercased())); each user needs an address of their own."
        }
        consider(try connection.query("""
            WITH firsts AS (SELECT email_key, id, MIN(email) AS email, MIN(position) AS position FROM import_staged
                            WHERE import_id = $1 GROUP BY email_key, id),
                 ranked AS (SELECT id, email, position, ROW_NUMBER() OVER byKey AS n,
                                   FIRST_VALUE(position) OVER byKey AS earlier
                            FROM firsts WINDOW byKey AS (PARTITION BY email_key ORDER BY position))
            SELECT position, id, email, earlier FROM ranked WHERE n = 2 ORDER BY position LIMIT 1
            """, parameters, operation).first) { row in
            "the email address “\(row[2] ?? "")” is also given to another user, by entry \(row[3] ?? ""); "
                + "each user needs an address of their own."
        }
        consider(try connection.query("""
            SELECT s.position, s.id, s.expected_version, u.version FROM import_staged s JOIN users u ON u.id = s.id
            WHERE s.import_id = $1 AND s.expected_version IS NOT NULL AND s.expected_version < u.version
            ORDER BY s.position LIMIT 1
            """, parameters, operation).first) { row in
            "it names version \(row[2] ?? "") of this user, but the store holds version \(row[3] ?? ""): "
                + "the user was changed after the file was made (export again, or drop \"version\" to overwrite)."
        }
        return first.map { .rejectedEntry(position: $0.position, id: $0.id, reason: $0.reason) }
    }
}
