import CSQLite
import Foundation
import UserListDomain

/// Applies a committed staged import (`SQLiteImportStaging`) to `users` in one transaction:
/// every entry in file order, or none. Kept apart from the staging so a history of changes can
/// be written beside the merge without touching how entries are staged.
///
/// As `SQLiteUserRepository.upsert` does, the merge drops the triggers on `users` inside its
/// transaction and keeps the search index itself. Unlike it, it logs one `reloaded` change for
/// the whole import: every feed tells its sessions to read what they show again, once, instead
/// of handing them a change per user (a terminal open on the list pays one reload).
enum SQLiteImportMerge {
    struct Outcome: Sendable {
        var read = 0
        var written = 0
        var leftSearchBacklog = false
    }

    static let operation = "merging an import"

    /// Merges import `id`; a refused entry rolls the merge back, drops the import and comes back
    /// as `.failure(.rejectedEntry)`. A store failure throws and leaves the import committed.
    static func run(_ id: Int, _ connection: SQLiteConnection) throws(SQLiteError) -> Result<Outcome, UserError> {
        let result: Result<Outcome, UserError>
        do throws(SQLiteError) {
            result = .success(try connection.writeTransaction(operation) { () throws(SQLiteError) -> Outcome in
                let outcome = try merge(id, connection)
                try SQLiteImportStaging.drop(where: "id = \(id)", connection)
                return outcome
            })
        } catch {
            guard let refusal = error.refusal else { throw error }
            result = .failure(refusal)
        }
        if case .failure = result {
            try connection.writeTransaction(operation) { () throws(SQLiteError) in
                try SQLiteImportStaging.drop(where: "id = \(id)", connection)
            }
        }
        return result
    }

    /// The merge's statements, inside the caller's transaction: the checks, then every entry in
    /// key order (id, then file order for an id given twice: the later entry wins), which keeps
    /// the id index's pages in cache. An import bigger than the store (and than
    /// `rebuildIndexesFrom`) builds the secondary indexes afterwards and leaves the search index
    /// to catch up once committed, as a bulk load does.
    private static func merge(_ id: Int, _ connection: SQLiteConnection) throws(SQLiteError) -> Outcome {
        try SQLiteImportValidation.check(id, connection)
        try recordHistory(of: id, connection)
        for name in SQLiteSchema.changeLogTriggerNames + SQLiteSearchIndex.triggerNames {
            try connection.execute("DROP TRIGGER IF EXISTS \(name)", operation)
        }
        let count = try connection.integer("SELECT entries FROM imports WHERE id = \(id)", operation)
        let stored = try connection.integer("SELECT user_count FROM store_state WHERE only = 1", operation)
        let rebuild = count >= SQLiteUserRepository.rebuildIndexesFrom && count > stored
        if rebuild {
            for index in SQLiteSchema.secondaryIndexes { try connection.execute("DROP INDEX \(index.name)", operation) }
            try SQLiteSearchIndex.startOver(connection, operation)
        }
        if count > 10_000 { try connection.execute("PRAGMA cache_size = -\(SQLiteUserRepository.importCacheKiB)", operation) }
        defer { _ = try? connection.execute("PRAGMA cache_size = -\(SQLiteUserRepository.normalCacheKiB)", operation) }
        var importer = try SQLiteUserRepository.Importer(connection, keepChanges: false, staged: true)
        let rows = try connection.statement("""
            SELECT position, id, name, email, avatar_url, expected_version, name_key, email_key
            FROM import_staged WHERE import_id = ?1 ORDER BY id, position
            """)
        defer { rows.reset() }
        rows.bind(1, id)
        var read = 0
        while try rows.step(operation) {
            read += 1
            let position = rows.int(0)
            guard let userID = UUID(uuidString: rows.text(1)) else { continue }
            let expected = rows.isNull(5) ? nil : rows.int(5)
            let user = User(id: userID, name: rows.text(2), email: rows.text(3), avatarURL: rows.optionalText(4), version: expected ?? 1)
            do throws(SQLiteError) {
                try importer.write(.init(user, keys: (rows.text(6), rows.text(7))), expected: expected)
            } catch {
                throw rejection(error, position: position, user: user, expected: expected)
            }
        }
        rows.reset()
        if rebuild {
            for index in SQLiteSchema.secondaryIndexes { try connection.execute(index.create, operation) }
        }
        try connection.execute(SQLiteSchema.changeLogTriggers + SQLiteSearchIndex.createTriggers, operation)
        try connection.execute("UPDATE store_state SET user_count = user_count + \(importer.inserted) WHERE only = 1", operation)
        let written = importer.inserted + importer.updated
        if written > 0 { try logReload(connection) }
        return Outcome(read: read, written: written, leftSearchBacklog: rebuild)
    }

    /// The history entries of import `id`, from its staged entries against `users` before the
    /// merge writes (`SQLiteHistory.recordStagedImport`), as the author its commit named.
    private static func recordHistory(of id: Int, _ connection: SQLiteConnection) throws(SQLiteError) {
        let statement = try connection.statement("SELECT author FROM imports WHERE id = ?1")
        statement.bind(1, id)
        let json = try statement.step(operation) ? statement.optionalText(0) : nil
        statement.reset()
        guard let json, let author = try? JSONDecoder().decode(ChangeAuthor.self, from: Data(json.utf8)) else { return }
        try SQLiteHistory.recordStagedImport(id, author, connection)
    }

    /// One change-log row for the whole import: feeds hand their sessions `UserChange.resync`.
    static func logReload(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute(
            "INSERT INTO changes (kind, user_id, at) VALUES ('reloaded', '', \(Int(Date().timeIntervalSince1970)))", operation)
    }

    /// `error` from writing the entry at `position`, as the refusal naming that entry (a store
    /// failure stays what it is).
    private static func rejection(_ error: SQLiteError, position: Int, user: User, expected: Int?) -> SQLiteError {
        let reason: String
        if let (email, other) = error.duplicateEmail {
            reason = "the email address “\(email)” is already used by “\(other.name)” (id \(other.id.uuidString.lowercased())); each user needs an address of their own."
        } else if case .conflict(let stored)? = error.refusal {
            reason = "it names version \(expected ?? 0) of this user, but the store holds version \(stored.version): "
                + "the user was changed after the file was made (export again, or drop \"version\" to overwrite)."
        } else if let refusal = error.refusal {
            reason = refusal.message
        } else {
            return error
        }
        return .refused(.rejectedEntry(position: position, id: user.id, reason: reason))
    }
}
