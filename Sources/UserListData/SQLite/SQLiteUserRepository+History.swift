import Foundation
import UserListDomain

/// Reading and pruning the history (`SQLiteHistory` writes it, inside each change's transaction).
extension SQLiteUserRepository: UserHistoryRepository {
    static let historyColumns = """
        entry, at, user_id, kind, via, actor_uid, actor_name, client, daemon, reverts,
        before_name, before_email, before_avatar_url, after_name, after_email, after_avatar_url, version_after
        """

    static func historyEntry(from row: SQLiteStatement) -> HistoryEntry {
        let kind = HistoryKind(rawValue: row.text(3)) ?? .saved
        let author = ChangeAuthor(
            uid: row.isNull(5) ? nil : UInt32(truncatingIfNeeded: row.int(5)), userName: row.optionalText(6),
            client: row.optionalText(7), via: ChangeVia(rawValue: row.text(4)) ?? .command, daemon: row.optionalText(8),
            reverting: row.isNull(9) ? nil : Int64(row.int(9)))
        func fields(_ first: Int32) -> UserFields? {
            row.isNull(first) ? nil : UserFields(name: row.text(first), email: row.text(first + 1), avatarURL: row.optionalText(first + 2))
        }
        return HistoryEntry(
            id: Int64(row.int(0)), at: Date(timeIntervalSince1970: Double(row.int(1)) / 1000),
            userID: row.uuid(2) ?? UUID(), kind: kind, author: author,
            before: fields(10), after: fields(13), versionAfter: row.isNull(16) ? nil : row.int(16))
    }

    /// Newest first below `query.before`. Each filter keeps the read a range of one index: a
    /// user's entries (`history_by_user`), an actor's (`history_by_actor`), or the rowid.
    public func history(_ query: HistoryQuery) async throws(UserError) -> HistoryPage {
        let limit = max(1, query.limit)
        var conditions: [String] = []
        if query.userID != nil { conditions.append("user_id = ?1") }
        if query.actorUID != nil { conditions.append(query.userID == nil ? "actor_uid = ?2" : "+actor_uid = ?2") }
        if query.since != nil { conditions.append("at >= ?3") }
        if query.before != nil { conditions.append("entry < ?4") }
        if query.after != nil { conditions.append("entry > ?6") }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let sql = "SELECT \(Self.historyColumns) FROM history \(whereClause) ORDER BY entry DESC LIMIT ?5"
        return try read { connection throws(SQLiteError) -> HistoryPage in
            let statement = try connection.statement(sql)
            defer { statement.reset() }
            if let user = query.userID { statement.bind(1, user) }
            if let uid = query.actorUID { statement.bind(2, Int(uid)) }
            if let since = query.since { statement.bind(3, SQLiteHistory.milliseconds(since)) }
            if let before = query.before { statement.bind(4, Int(before)) }
            if let after = query.after { statement.bind(6, Int(after)) }
            statement.bind(5, limit + 1)
            var entries: [HistoryEntry] = []
            var more = false
            while try statement.step("reading the history") {
                if entries.count == limit { more = true; break }
                entries.append(Self.historyEntry(from: statement))
            }
            statement.reset()
            return HistoryPage(entries: try Self.completingImports(entries, connection), next: more ? entries.last?.id : nil)
        }
    }

    public func historyEntry(_ id: Int64) async throws(UserError) -> HistoryEntry {
        let found = try read { connection throws(SQLiteError) -> HistoryEntry? in
            let statement = try connection.statement("SELECT \(Self.historyColumns) FROM history WHERE entry = ?1")
            defer { statement.reset() }
            statement.bind(1, Int(id))
            guard try statement.step("reading a history entry") else { return nil }
            let entry = Self.historyEntry(from: statement)
            statement.reset()
            return try Self.completingImports([entry], connection).first
        }
        guard let found else { throw .noHistoryEntry(entry: id) }
        return found
    }

    /// Fills in the fields after of an import's slim entries (`SQLiteHistory.recordImport`):
    /// the next entry's `before` for that user, or the user as stored now (with its version,
    /// which a revert checks) when nothing changed it since. A user removed since keeps nil.
    static func completingImports(_ entries: [HistoryEntry], _ connection: SQLiteConnection) throws(SQLiteError) -> [HistoryEntry] {
        guard entries.contains(where: { $0.after == nil && $0.kind != .removed }) else { return entries }
        let next = try connection.statement(
            "SELECT before_name, before_email, before_avatar_url FROM history WHERE user_id = ?1 AND entry > ?2 ORDER BY entry LIMIT 1")
        defer { next.reset() }
        var completed = entries
        for index in completed.indices where completed[index].after == nil && completed[index].kind != .removed {
            let entry = completed[index]
            next.reset()
            next.bind(1, entry.userID)
            next.bind(2, Int(entry.id))
            if try next.step("reading the history") {
                if !next.isNull(0) {
                    completed[index].after = UserFields(name: next.text(0), email: next.text(1), avatarURL: next.optionalText(2))
                }
            } else if let user = try stored(id: entry.userID, connection) {
                completed[index].after = UserFields(user)
                completed[index].versionAfter = user.version
            }
        }
        return completed
    }

    /// Deletes every entry below the first one recorded at or after `cutoff` (found by a walk
    /// from the oldest entry: it reads about the rows it deletes; a clock set back only keeps
    /// entries longer), in batches of `historyPruneBatch`, each its own short write, so saves
    /// never wait long behind a prune of a year's worth of entries.
    public func pruneHistory(before cutoff: Date) async throws(UserError) -> Int {
        let bound = try read { connection throws(SQLiteError) -> Int in
            let statement = try connection.statement("""
                SELECT COALESCE((SELECT entry FROM history WHERE at >= ?1 ORDER BY entry LIMIT 1),
                                (SELECT MAX(entry) + 1 FROM history), 0)
                """)
            defer { statement.reset() }
            statement.bind(1, SQLiteHistory.milliseconds(cutoff))
            return try statement.step("pruning the history") ? statement.int(0) : 0
        }
        var total = 0
        while true {
            let deleted = try await write { connection throws(SQLiteError) -> Int in
                try connection.writeTransaction("pruning the history") { () throws(SQLiteError) -> Int in
                    let statement = try connection.statement("""
                        DELETE FROM history WHERE entry IN (SELECT entry FROM history WHERE entry < ?1 ORDER BY entry LIMIT ?2)
                        """)
                    statement.bind(1, bound)
                    statement.bind(2, Self.historyPruneBatch)
                    try statement.run("pruning the history")
                    return connection.changes
                }
            } committed: { _ in nil }
            total += deleted
            if deleted < Self.historyPruneBatch { return total }
        }
    }

    static let historyPruneBatch = 10_000
}
