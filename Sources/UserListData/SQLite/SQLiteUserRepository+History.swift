import Foundation
import UserListDomain

/// Reading and pruning the history (`SQLiteHistory` writes it, inside each change's transaction).
extension SQLiteUserRepository: UserHistoryRepository {
    /// An entry's columns, and (17...20) a whole import's source and counts; (21) whether the
    /// row is one user's part of an import (`SQLiteHistoryBatch`).
    static let historyColumns = """
        h.entry, h.at, h.user_id, h.kind, h.via, h.actor_uid, h.actor_name, h.client, h.daemon, h.reverts,
        h.before_name, h.before_email, h.before_avatar_url, h.after_name, h.after_email, h.after_avatar_url,
        h.version_after, h.source, h.added, h.updated, h.removed, 0
        """

    /// A user's part of an import in the shape of `historyColumns`: the import's entry, author
    /// and time, the user's kind, fields before and version after (the fields after are filled in).
    static let partColumns = """
        h.entry, h.at, p.user_id, p.kind, h.via, h.actor_uid, h.actor_name, h.client, h.daemon, h.reverts,
        p.before_name, p.before_email, p.before_avatar_url, NULL, NULL, NULL, p.version_after,
        h.source, NULL, NULL, NULL, 1
        """

    static func historyEntry(from row: SQLiteStatement) -> HistoryEntry {
        let kind = HistoryKind(rawValue: row.text(3)) ?? .saved
        let author = ChangeAuthor(
            uid: row.isNull(5) ? nil : UInt32(truncatingIfNeeded: row.int(5)), userName: row.optionalText(6),
            client: row.optionalText(7), via: ChangeVia(rawValue: row.text(4)) ?? .command, daemon: row.optionalText(8),
            reverting: row.isNull(9) ? nil : Int64(row.int(9)), source: row.optionalText(17))
        func fields(_ first: Int32) -> UserFields? {
            row.isNull(first)
                ? nil
                : UserFields(name: row.text(first), email: row.text(first + 1), avatarURL: row.optionalText(first + 2))
        }
        let batch = kind == .imported
            ? BatchSummary(source: row.optionalText(17), added: row.int(18), updated: row.int(19), removed: row.int(20))
            : nil
        return HistoryEntry(
            id: Int64(row.int(0)), at: Date(timeIntervalSince1970: Double(row.int(1)) / 1000),
            userID: row.uuid(2), kind: kind, author: author,
            before: fields(10), after: fields(13), versionAfter: row.isNull(16) ? nil : row.int(16),
            batch: batch, partOf: row.int(21) == 1)
    }

    /// The text of a history read: everyone's entries, or one user's entries and their parts of
    /// imports, newest first. Each branch stays a range of one index (`history_by_user`,
    /// `history_parts_by_user`, `history_by_actor`, or the rowid). Parameters: `?1` user, `?2`
    /// actor, `?3` since, `?4` before, `?5` limit, `?6` after, `?7` kind, `?8` via, `?9` the
    /// daemon reading.
    static func historySQL(_ query: HistoryQuery, select: String = "*", limited: Bool = true) -> String {
        var common: [String] = []
        if query.actorUID != nil { common.append(query.userID == nil ? "h.actor_uid = ?2" : "+h.actor_uid = ?2") }
        if query.since != nil { common.append("h.at >= ?3") }
        if query.before != nil { common.append("h.entry < ?4") }
        if query.after != nil { common.append("h.entry > ?6") }
        switch query.via {
        case nil: break
        case .anotherDaemon?: common.append("h.daemon IS NOT NULL AND h.daemon IS NOT ?9")
        case _?:
            common.append(query.seenFrom == nil ? "h.via = ?8" : "h.via = ?8 AND (h.daemon IS NULL OR h.daemon = ?9)")
        }
        func clause(_ conditions: [String]) -> String {
            conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        }
        let kind = query.kind == nil ? [] : ["h.kind = ?7"]
        let limit = limited ? " ORDER BY entry DESC LIMIT ?5" : ""
        guard query.userID != nil else {
            return "SELECT \(select) FROM (SELECT \(historyColumns) FROM history h \(clause(common + kind)))\(limit)"
        }
        let partKind = query.kind == nil ? [] : ["(?7 = 'imported' OR p.kind = ?7)"]
        return """
            SELECT \(select) FROM (
                SELECT \(historyColumns) FROM history h \(clause(["h.user_id = ?1"] + common + kind))
                UNION ALL
                SELECT \(partColumns) FROM history_parts p JOIN history h ON h.entry = p.entry
                \(clause(["p.user_id = ?1"] + common + partKind))
            )\(limit)
            """
    }

    static func bind(_ query: HistoryQuery, _ statement: SQLiteStatement) {
        if let user = query.userID { statement.bind(1, user) }
        if let uid = query.actorUID { statement.bind(2, Int(uid)) }
        if let since = query.since { statement.bind(3, SQLiteHistory.milliseconds(since)) }
        if let before = query.before { statement.bind(4, Int(before)) }
        statement.bind(5, max(1, query.limit) + 1)
        if let after = query.after { statement.bind(6, Int(after)) }
        if let kind = query.kind { statement.bind(7, kind.rawValue) }
        if let via = query.via { statement.bind(8, via.rawValue) }
        statement.bind(9, query.seenFrom)
    }

    /// Newest first below `query.before`.
    public func history(_ query: HistoryQuery) async throws(UserError) -> HistoryPage {
        let limit = max(1, query.limit)
        let sql = Self.historySQL(query)
        return try read { connection throws(SQLiteError) -> HistoryPage in
            let statement = try connection.statement(sql)
            defer { statement.reset() }
            Self.bind(query, statement)
            var entries: [HistoryEntry] = []
            var more = false
            while try statement.step("reading the history") {
                if entries.count == limit { more = true; break }
                entries.append(Self.historyEntry(from: statement))
            }
            statement.reset()
            return HistoryPage(entries: try Self.completingImports(entries, connection),
                               next: more ? entries.last?.id : nil)
        }
    }

    public func historyCount(_ query: HistoryQuery, below entry: Int64) async throws(UserError) -> Int {
        var rest = query
        rest.before = entry
        let sql = Self.historySQL(rest, select: "count(*)", limited: false)
        return try read { connection throws(SQLiteError) -> Int in
            let statement = try connection.statement(sql)
            defer { statement.reset() }
            Self.bind(rest, statement)
            return try statement.step("counting the history") ? statement.int(0) : 0
        }
    }

    public func historyEntry(_ id: Int64) async throws(UserError) -> HistoryEntry {
        let found = try read { connection throws(SQLiteError) -> HistoryEntry? in
            let statement = try connection.statement("SELECT \(Self.historyColumns) FROM history h WHERE h.entry = ?1")
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

    /// Fills in the fields after of slim rows: an import's parts (`SQLiteHistoryBatch`) and
    /// the per-user import entries older releases wrote. They are the next entry's `before` for
    /// that user (an entry of its own or a part of a later import), or the user as stored now
    /// (with its version, which a revert checks) when nothing changed it since. A user removed
    /// since keeps nil.
    static func completingImports(_ entries: [HistoryEntry],
                                  _ connection: SQLiteConnection) throws(SQLiteError) -> [HistoryEntry] {
        func slim(_ entry: HistoryEntry) -> Bool {
            entry.after == nil && entry.kind != .removed && entry.kind != .imported
        }
        guard entries.contains(where: slim) else { return entries }
        let next = try connection.statement("""
            SELECT entry, before_name, before_email, before_avatar_url FROM (
                SELECT entry, before_name, before_email, before_avatar_url FROM history
                WHERE user_id = ?1 AND entry > ?2 ORDER BY entry LIMIT 1)
            UNION ALL
            SELECT entry, before_name, before_email, before_avatar_url FROM (
                SELECT entry, before_name, before_email, before_avatar_url FROM history_parts
                WHERE user_id = ?1 AND entry > ?2 ORDER BY entry LIMIT 1)
            ORDER BY entry LIMIT 1
            """)
        defer { next.reset() }
        var completed = entries
        for index in completed.indices where slim(completed[index]) {
            guard let userID = completed[index].userID else { continue }
            next.reset()
            next.bind(1, userID)
            next.bind(2, Int(completed[index].id))
            if try next.step("reading the history") {
                if !next.isNull(1) {
                    completed[index].after = UserFields(name: next.text(1), email: next.text(2),
                                                        avatarURL: next.optionalText(3))
                }
            } else if let user = try stored(id: userID, connection) {
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
            let (deleted, partsLeft) = try await write { connection throws(SQLiteError) -> (Int, Bool) in
                try connection.writeTransaction("pruning the history") { () throws(SQLiteError) -> (Int, Bool) in
                    let statement = try connection.statement("""
                        DELETE FROM history
                        WHERE entry IN (SELECT entry FROM history WHERE entry < ?1 ORDER BY entry LIMIT ?2)
                        """)
                    statement.bind(1, bound)
                    statement.bind(2, Self.historyPruneBatch)
                    try statement.run("pruning the history")
                    let deleted = connection.changes
                    // An import's parts go with it, a batch at a time (a big import has many).
                    let parts = try connection.statement("""
                        DELETE FROM history_parts WHERE (entry, user_id) IN
                            (SELECT entry, user_id FROM history_parts WHERE entry < ?1 ORDER BY entry LIMIT ?2)
                        """)
                    parts.bind(1, bound)
                    parts.bind(2, Self.historyPruneBatch)
                    try parts.run("pruning the history")
                    return (deleted, connection.changes == Self.historyPruneBatch)
                }
            } committed: { _ in nil }
            total += deleted
            if deleted < Self.historyPruneBatch && !partsLeft { return total }
        }
    }

    static let historyPruneBatch = 10_000
}
