import CSQLite
import Foundation
import ThreadLocks
import UserListDomain

/// Undoing an import (`revertImport`): one transaction, set-based over the import's parts
/// (`SQLiteHistoryBatch`), so an undo of a million-user import costs what the import did.
///
/// A user "changed since the import" is one whose version is not the one the import gave it
/// (saved since, or removed: gone). Those refuse the undo, unless skipped. The users it added
/// are removed and the users it updated get their fields from before it back, each with a new
/// version, as a save would; the undo is one entry of its own with a part per user, so it is
/// in each user's history too. Like an import's merge, it logs one `reloaded` row: every
/// session reads what it shows again, once.
extension SQLiteUserRepository {
    /// How many changed users an undo refusal names.
    static let changedNamed = 5

    private enum UndoOutcome: Sendable {
        case done(ImportUndo)
        case refused(UserError)
    }

    public func revertImport(_ entry: Int64, skippingChanged: Bool,
                             by author: ChangeAuthor) async throws(UserError) -> ImportUndo {
        // An import's merge writes past the guards; the undo waits for it like another import.
        await mergeTurns.enter()
        let outcome: Result<UndoOutcome, UserError>
        do throws(UserError) {
            outcome = .success(try await write { connection throws(SQLiteError) -> UndoOutcome in
                do throws(SQLiteError) {
                    let operation = "undoing an import"
                    return try connection.writeTransaction(operation) { () throws(SQLiteError) -> UndoOutcome in
                        try Self.undo(entry, skippingChanged: skippingChanged, author, connection)
                    }
                } catch where error.primaryCode == SQLITE_CONSTRAINT {
                    return .refused(.validation(field: .email, message: """
                        Entry \(entry) was not undone: an email address a user had before the import belongs to \
                        another user now; nothing was changed.
                        """))
                }
            } committed: { outcome in
                guard case .done(let undo) = outcome, undo.removed + undo.restored > 0 else { return nil }
                return .readTheLog
            })
        } catch {
            outcome = .failure(error)
        }
        await mergeTurns.leave()
        switch try outcome.get() {
        case .done(let undo): return undo
        case .refused(let error): throw error
        }
    }

    /// The undo, inside its transaction.
    private static func undo(_ entry: Int64, skippingChanged: Bool, _ author: ChangeAuthor,
                             _ connection: SQLiteConnection) throws(SQLiteError) -> UndoOutcome {
        if let refusal = try undoRefusal(entry, connection) { return .refused(refusal) }
        let changed = try changedSinceImport(entry, connection)
        if !changed.isEmpty && !skippingChanged {
            let named = Array(changed.prefix(changedNamed))
            return .refused(.changedSinceImport(entry: entry, ids: named, count: changed.count))
        }
        let undo = try SQLiteHistoryBatch.begin(author, connection)
        let (removed, restored) = try undoWrites(entry, as: undo, connection)
        if removed + restored > 0 { try SQLiteImportMerge.logReload(connection) }
        try SQLiteHistoryBatch.count(undo, added: 0, updated: restored, removed: removed, connection)
        try SQLiteHistoryBatch.finish(undo, connection)
        return .done(ImportUndo(entry: removed + restored > 0 ? undo : nil, removed: removed, restored: restored,
                                skipped: changed))
    }

    /// Why entry `entry` cannot be undone: it is no import, or an undo of it exists already.
    private static func undoRefusal(_ entry: Int64,
                                    _ connection: SQLiteConnection) throws(SQLiteError) -> UserError? {
        let operation = "undoing an import"
        let header = try connection.statement("SELECT kind, reverts FROM history WHERE entry = ?1")
        defer { header.reset() }
        header.bind(1, Int(entry))
        guard try header.step(operation), header.text(0) == HistoryKind.imported.rawValue, header.isNull(1) else {
            return .validation(field: .name, message: "Entry \(entry) is no import.")
        }
        header.reset()
        let undone = try connection.statement(
            "SELECT entry FROM history WHERE reverts = ?1 AND kind = 'imported' ORDER BY entry LIMIT 1")
        defer { undone.reset() }
        undone.bind(1, Int(entry))
        if try undone.step(operation) {
            return .alreadyUndone(entry: entry, reason: "entry \(undone.int(0)) undid it")
        }
        return nil
    }

    /// Import `entry`'s users back as they were, recorded as history entry `undo`: those it added
    /// and nobody changed since removed, those it updated restored. Returns how many of each.
    private static func undoWrites(_ entry: Int64, as undo: Int64,
                                     _ connection: SQLiteConnection) throws(SQLiteError) -> (Int, Int) {
        let operation = "undoing an import"
        // The undo's parts first, from the users as they are: what it removes and what it puts back.
        let parts = try connection.statement("""
            INSERT INTO history_parts (entry, user_id, kind, before_name, before_email, before_avatar_url,
                                       version_after)
            SELECT ?2, p.user_id, CASE p.kind WHEN 'added' THEN 'removed' ELSE 'saved' END,
                   u.name, u.email, u.avatar_url,
                   CASE p.kind WHEN 'added' THEN NULL ELSE u.version + 1 END
            FROM history_parts p JOIN users u ON u.id = p.user_id
            WHERE p.entry = ?1 AND u.version = p.version_after
            """)
        parts.bind(1, Int(entry))
        parts.bind(2, Int(undo))
        try parts.run(operation)
        try connection.execute("UPDATE store_state SET log_changes = 0 WHERE only = 1", operation)
        // Removals first: an address a removed user took is free again for the user it was taken from.
        let remove = try connection.statement("""
            DELETE FROM users WHERE id IN (SELECT user_id FROM history_parts WHERE entry = ?1 AND kind = 'removed')
            """)
        remove.bind(1, Int(undo))
        try remove.run(operation)
        let removed = connection.changes
        let restored = try restoreUpdated(entry, as: undo, connection)
        let state = try connection.statement(
            "UPDATE store_state SET log_changes = 1, user_count = user_count - ?1 WHERE only = 1")
        state.bind(1, removed)
        try state.run(operation)
        return (removed, restored)
    }

    /// The users import `entry` updated, back to their fields before it; returns how many.
    private static func restoreUpdated(_ entry: Int64, as undo: Int64,
                                       _ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        // An unchanged email keeps its stored key (see SQLiteSchema.v4).
        let restore = try connection.statement("""
            UPDATE users SET name = o.before_name, email = o.before_email, avatar_url = o.before_avatar_url,
                name_key = userlist_fold(o.before_name),
                email_key = CASE WHEN users.email = o.before_email THEN users.email_key
                                 ELSE userlist_fold(o.before_email) END,
                version = users.version + 1
            FROM (SELECT p.user_id, p.before_name, p.before_email, p.before_avatar_url
                  FROM history_parts p
                      JOIN history_parts d ON d.entry = ?2 AND d.user_id = p.user_id AND d.kind = 'saved'
                  WHERE p.entry = ?1) AS o
            WHERE users.id = o.user_id
            """)
        restore.bind(1, Int(entry))
        restore.bind(2, Int(undo))
        try restore.run("undoing an import")
        return connection.changes
    }

    /// The users of import `entry` changed since it (saved since, or removed), in id order.
    private static func changedSinceImport(_ entry: Int64,
                                           _ connection: SQLiteConnection) throws(SQLiteError) -> [UUID] {
        let statement = try connection.statement("""
            SELECT p.user_id FROM history_parts p LEFT JOIN users u ON u.id = p.user_id
            WHERE p.entry = ?1 AND (u.id IS NULL OR u.version IS NOT p.version_after)
            ORDER BY p.user_id
            """)
        defer { statement.reset() }
        statement.bind(1, Int(entry))
        var ids: [UUID] = []
        while try statement.step("undoing an import") {
            if let id = statement.uuid(0) { ids.append(id) }
        }
        return ids
    }
}
