import Foundation
import ThreadLocks
import UserListDomain

/// The checks a staged PostgreSQL import passes before its merge commits anything
/// (`PostgresImportMerge`): the same three set queries as SQLite's (`SQLiteImportValidation`),
/// with the same wording, so the file's first bad entry is named the same on both stores and
/// the one `INSERT ... ON CONFLICT` cannot be refused half-way.
enum PostgresImportValidation {
    static let operation = "checking an import"

    /// A refused entry: its position in the file, its id, and why.
    typealias Rejection = (position: Int, id: UUID, reason: String)

    /// The first bad entry of import `id` (by position in the file), if any.
    static func firstRejection(_ id: Int, _ connection: PGConnection) throws(PGError) -> UserError? {
        let found = [try addressTaken(id, connection), try addressShared(id, connection), try staleVersion(id, connection)]
        return first(found)
    }

    /// The earliest of `rejections` in the file, as the error the client gets.
    static func first(_ rejections: [Rejection?]) -> UserError? {
        rejections.compactMap { $0 }.min { $0.position < $1.position }
            .map { .rejectedEntry(position: $0.position, id: $0.id, reason: $0.reason) }
    }

    private static func rejection(_ row: [String?]?, _ reason: ([String?]) -> String) -> Rejection? {
        guard let row, let position = row[0].flatMap({ Int($0) }), let uuid = UUIDText.parse(row[1] ?? "") else { return nil }
        return (position, uuid, reason(row))
    }

    /// The first entry giving an address another stored user has.
    static func addressTaken(_ id: Int, _ connection: PGConnection) throws(PGError) -> Rejection? {
        rejection(try connection.query("""
            SELECT s.position, s.id, s.email, u.id, u.name FROM import_staged s JOIN users u ON u.email_key = s.email_key
            WHERE s.import_id = $1 AND u.id <> s.id ORDER BY s.position LIMIT 1
            """, [String(id)], operation).first) { row in
            "the email address “\(row[2] ?? "")” is already used by “\(row[4] ?? "")” (id \((row[3] ?? "").lowercased())); each user needs an address of their own."
        }
    }

    /// The first entry giving an address an earlier entry gives to another user.
    static func addressShared(_ id: Int, _ connection: PGConnection) throws(PGError) -> Rejection? {
        rejection(try connection.query("""
            WITH firsts AS (SELECT email_key, id, MIN(email) AS email, MIN(position) AS position FROM import_staged
                            WHERE import_id = $1 GROUP BY email_key, id),
                 ranked AS (SELECT id, email, position, ROW_NUMBER() OVER byKey AS n, FIRST_VALUE(position) OVER byKey AS earlier
                            FROM firsts WINDOW byKey AS (PARTITION BY email_key ORDER BY position))
            SELECT position, id, email, earlier FROM ranked WHERE n = 2 ORDER BY position LIMIT 1
            """, [String(id)], operation).first) { row in
            "the email address “\(row[2] ?? "")” is also given to another user, by entry \(row[3] ?? ""); each user needs an address of their own."
        }
    }

    /// The first entry naming a version older than the stored one (in the merge's transaction,
    /// once those users are locked: `PostgresImportMerge.lockVersionedUsers`).
    static func staleVersion(_ id: Int, _ connection: PGConnection) throws(PGError) -> Rejection? {
        rejection(try connection.query("""
            SELECT s.position, s.id, s.expected_version, u.version FROM import_staged s JOIN users u ON u.id = s.id
            WHERE s.import_id = $1 AND s.expected_version IS NOT NULL AND s.expected_version < u.version
            ORDER BY s.position LIMIT 1
            """, [String(id)], operation).first) { row in
            "it names version \(row[2] ?? "") of this user, but the store holds version \(row[3] ?? ""): "
                + "the user was changed after the file was made (export again, or drop \"version\" to overwrite)."
        }
    }
}

/// The two address checks of a large import, run on a connection and thread of their own while
/// the merge writes (`PostgresImportMerge`): the merge is one backend on one core, and the
/// checks (4.6 s of a million-user import, one after the other before it) need the other.
///
/// Nothing commits before they end: the merge waits for them inside its transaction and rolls
/// back if they refuse an entry, so the import is still all or nothing and the refused entry is
/// the one the serial checks would name. They read what is committed, the store as it was
/// before the merge (its writes are not committed), which is what they read before it too; an
/// address another client takes meanwhile fails the merge's unique index, as before. A refusal
/// cancels the merge's statement (`PGCanceller`), so a bad file is not merged whole for nothing.
final class PostgresParallelChecks: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let outcome = Lock<Result<[PostgresImportValidation.Rejection?], PGError>?>(nil)

    /// Starts the checks of import `id` on a new connection to `conninfo`; a refusal cancels
    /// what `merging` runs.
    init(_ id: Int, conninfo: String, server: String, cancelling merging: PGCanceller) {
        let (done, outcome) = (done, outcome)
        Thread.detachNewThread {
            let connection = PGConnection(conninfo: conninfo, server: server)
            let result = Result { () throws(PGError) -> [PostgresImportValidation.Rejection?] in
                [try PostgresImportValidation.addressTaken(id, connection), try PostgresImportValidation.addressShared(id, connection)]
            }
            connection.disconnect()
            if case .success(let found) = result, found.contains(where: { $0 != nil }) { merging.cancel() }
            outcome.withLock { $0 = result }
            done.signal()
        }
    }

    /// Waits for the checks: what they refused (nil entries: nothing), or how they failed.
    func wait() throws(PGError) -> [PostgresImportValidation.Rejection?] {
        done.wait()
        return try outcome.withLock { $0 }!.get()
    }
}
