import Foundation
import UserListDomain

/// Undoing an import (`revertImport`) in one transaction, as in SQLite
/// (`SQLiteUserRepository+UndoImport`): the import's users are locked first, so none changes
/// between the check and the writes; a user whose version is not the one the import gave it
/// changed since (or is gone) and refuses the undo unless skipped. The users it added are
/// removed, the ones it updated get their fields from before it back with a new version (the
/// keys folded here, as every write folds them), and the undo is one entry with a part per
/// user. One `reloaded` change-log row: every session reads what it shows again, once.
extension PostgresUserRepository {
    private enum UndoOutcome: Sendable {
        case done(ImportUndo, seq: Int)
        case refused(UserError)
    }

    public func revertImport(_ entry: Int64, skippingChanged: Bool,
                             by author: ChangeAuthor) async throws(UserError) -> ImportUndo {
        let receipt = CommitReceipt.current
        let outcome: UndoOutcome
        do {
            outcome = try await pool.perform { connection throws(PGError) -> UndoOutcome in
                do throws(PGError) {
                    return try connection.transaction("undoing an import") { () throws(PGError) -> UndoOutcome in
                        let outcome = try Self.undo(entry, skippingChanged: skippingChanged, author, connection)
                        if case .done(_, let seq) = outcome, seq > 0 { receipt?.record(seq) }  // before COMMIT's NOTIFY
                        return outcome
                    }
                } catch where error.isUniqueViolation {
                    return .refused(.validation(field: .email, message: """
                        Entry \(entry) was not undone: an email address a user had before the import belongs to \
                        another user now; nothing was changed.
                        """))
                }
            }
        } catch {
            throw error.userError
        }
        switch outcome {
        case .done(let undo, let seq):
            if seq > 0 { notifyCommitted(PostgresCommit(seq: seq, change: nil)) }
            return undo
        case .refused(let error):
            throw error
        }
    }

    private static func undo(_ entry: Int64, skippingChanged: Bool, _ author: ChangeAuthor,
                             _ connection: PGConnection) throws(PGError) -> UndoOutcome {
        let operation = "undoing an import"
        let id = String(entry)
        if let refusal = try undoRefusal(entry, connection) { return .refused(refusal) }
        let changed = try lockAndFindChanged(id, connection)
        if !changed.isEmpty && !skippingChanged {
            let named = Array(changed.prefix(SQLiteUserRepository.changedNamed))
            return .refused(.changedSinceImport(entry: entry, ids: named, count: changed.count))
        }
        let undo = String(try PostgresHistoryBatch.begin(author, connection, operation))
        let (removed, restored) = try undoWrites(id, as: undo, connection)
        try PostgresHistoryBatch.finish(Int64(undo) ?? 0, added: 0, updated: restored, removed: removed,
                                        connection, operation)
        guard removed + restored > 0 else {
            return .done(ImportUndo(entry: nil, removed: 0, restored: 0, skipped: changed), seq: 0)
        }
        let seq = try logReload(removed: removed, connection)
        return .done(ImportUndo(entry: Int64(undo), removed: removed, restored: restored, skipped: changed), seq: seq)
    }

    /// Why entry `entry` cannot be undone: it is no import, or an undo of it exists already.
    /// Locks the entry's row.
    private static func undoRefusal(_ entry: Int64, _ connection: PGConnection) throws(PGError) -> UserError? {
        let operation = "undoing an import"
        let id = String(entry)
        let header = try connection.query("SELECT kind, reverts FROM history WHERE entry = $1::bigint FOR UPDATE",
                                          [id], operation)
        guard let row = header.first, row[0] == HistoryKind.imported.rawValue, row[1] == nil else {
            return .validation(field: .name, message: "Entry \(entry) is no import.")
        }
        let undoneBy = "SELECT min(entry) FROM history WHERE reverts = $1::bigint AND kind = 'imported'"
        if let undone = try connection.query(undoneBy, [id], operation).first, undone[0] != nil {
            return .alreadyUndone(entry: entry, reason: "entry \(undone[0] ?? "?") undid it")
        }
        return nil
    }

    /// Locks the users of import `id` (in id order) and returns those changed since it (saved
    /// since, or removed), in id order.
    private static func lockAndFindChanged(_ id: String, _ connection: PGConnection) throws(PGError) -> [UUID] {
        let operation = "undoing an import"
        try connection.query("""
            SELECT 1 FROM users WHERE id IN (SELECT user_id FROM history_parts WHERE entry = $1::bigint)
            ORDER BY id FOR UPDATE
            """, [id], operation)
        return try connection.query("""
            SELECT p.user_id FROM history_parts p LEFT JOIN users u ON u.id = p.user_id
            WHERE p.entry = $1::bigint AND (u.id IS NULL OR u.version IS DISTINCT FROM p.version_after)
            ORDER BY p.user_id
            """, [id], operation).rows.compactMap { $0[0].flatMap { UUIDText.parse($0) } }
    }

    /// Import `id`'s users back as they were, recorded as history entry `undo`: those it added and
    /// nobody changed since removed, those it updated restored. Returns how many of each.
    private static func undoWrites(_ id: String, as undo: String,
                                     _ connection: PGConnection) throws(PGError) -> (Int, Int) {
        let operation = "undoing an import"
        try connection.query("""
            INSERT INTO history_parts (entry, user_id, kind, before_name, before_email, before_avatar_url,
                                       version_after)
            SELECT $2::bigint, p.user_id, CASE p.kind WHEN 'added' THEN 'removed' ELSE 'saved' END,
                   u.name, u.email, u.avatar_url,
                   CASE p.kind WHEN 'added' THEN NULL ELSE u.version + 1 END
            FROM history_parts p JOIN users u ON u.id = p.user_id
            WHERE p.entry = $1::bigint AND u.version = p.version_after
            """, [id, undo], operation)
        // Removals first: an address a removed user took is free again for the user it was taken from.
        let removed = try connection.query("""
            DELETE FROM users
            WHERE id IN (SELECT user_id FROM history_parts WHERE entry = $1::bigint AND kind = 'removed')
            """, [undo], operation).affected
        return (removed, try restoreUpdated(id, as: undo, connection))
    }

    /// The users import `id` updated, back to their fields before it, in batches; returns how many.
    private static func restoreUpdated(_ id: String, as undo: String,
                                       _ connection: PGConnection) throws(PGError) -> Int {
        let operation = "undoing an import"
        let restore = try connection.query("""
            SELECT p.user_id, p.before_name, p.before_email, p.before_avatar_url
            FROM history_parts p
                JOIN history_parts d ON d.entry = $2::bigint AND d.user_id = p.user_id AND d.kind = 'saved'
            WHERE p.entry = $1::bigint ORDER BY p.user_id
            """, [id, undo], operation).rows.compactMap { row -> User? in
                guard let userID = row[0].flatMap({ UUIDText.parse($0) }), let name = row[1], let email = row[2] else {
                    return nil
                }
                return User(id: userID, name: name, email: email, avatarURL: row[3], version: 0)
            }
        var restored = 0, start = 0
        while start < restore.count {
            let batch = restore[start..<min(restore.count, start + importBatch)]
            start += batch.count
            // An unchanged email keeps its stored key (a duplicate from before unique emails).
            restored += try connection.query("""
                UPDATE users AS u SET name = i.name, email = i.email, avatar_url = i.avatar_url, name_key = i.name_key,
                    email_key = CASE WHEN u.email = i.email THEN u.email_key ELSE i.email_key END,
                    version = u.version + 1
                FROM json_to_recordset($1::json)
                    AS i(id uuid, name text, email text, avatar_url text, version integer, name_key text,
                         email_key text)
                WHERE u.id = i.id
                """, [json(batch)], operation).affected
        }
        return restored
    }

    /// The undo's count change and its `reloaded` change, announced; returns the change's seq.
    private static func logReload(removed: Int, _ connection: PGConnection) throws(PGError) -> Int {
        let operation = "undoing an import"
        try PostgresSchema.lockChangeLog(connection, operation)
        if removed > 0 {
            try connection.query("UPDATE store_state SET user_count = user_count - $1", [String(removed)], operation)
        }
        let seq = try connection.query("INSERT INTO changes (kind, user_id) VALUES ('reloaded', $1) RETURNING seq",
                                       [PostgresImportSchema.everyone], operation).first?[0].flatMap { Int($0) } ?? 0
        try connection.query("SELECT pg_notify($1, '')", [PostgresSchema.channel], operation)
        return seq
    }
}
