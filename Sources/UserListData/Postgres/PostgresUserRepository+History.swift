import Foundation
import UserListDomain

/// Reading and pruning the shared history (`PostgresHistory` writes it).
extension PostgresUserRepository: UserHistoryRepository {
    /// An entry's columns, (17...20) a whole import's source and counts, (21) whether the row is
    /// one user's part of an import (`PostgresHistoryBatch`).
    static let historyColumns = """
        h.entry, (extract(epoch FROM h.at) * 1000)::bigint AS at_ms, h.user_id, h.kind, h.via, h.actor_uid,
        h.actor_name, h.client, h.daemon, h.reverts, h.before_name, h.before_email, h.before_avatar_url,
        h.after_name, h.after_email, h.after_avatar_url, h.version_after, h.source, h.added, h.updated, h.removed,
        false AS part
        """

    /// A user's part of an import in the shape of `historyColumns` (the fields after are filled in).
    static let partColumns = """
        h.entry, (extract(epoch FROM h.at) * 1000)::bigint, p.user_id, p.kind, h.via, h.actor_uid, h.actor_name,
        h.client, h.daemon, h.reverts, p.before_name, p.before_email, p.before_avatar_url, NULL, NULL,
        NULL, p.version_after, h.source, NULL, NULL, NULL, true
        """

    static func historyEntry(_ row: [String?]) -> HistoryEntry {
        func fields(_ first: Int) -> UserFields? {
            guard let name = row[first] else { return nil }
            return UserFields(name: name, email: row[first + 1] ?? "", avatarURL: row[first + 2])
        }
        let kind = HistoryKind(rawValue: row[3] ?? "") ?? .saved
        let author = ChangeAuthor(
            uid: row[5].flatMap { UInt32($0) }, userName: row[6], client: row[7],
            via: ChangeVia(rawValue: row[4] ?? "") ?? .command, daemon: row[8], reverting: row[9].flatMap { Int64($0) },
            source: row[17])
        let batch = kind == .imported
            ? BatchSummary(source: row[17], added: Int(row[18] ?? "") ?? 0, updated: Int(row[19] ?? "") ?? 0,
                           removed: Int(row[20] ?? "") ?? 0)
            : nil
        return HistoryEntry(
            id: Int64(row[0] ?? "") ?? 0, at: Date(timeIntervalSince1970: (Double(row[1] ?? "") ?? 0) / 1000),
            userID: row[2].flatMap { UUIDText.parse($0) }, kind: kind,
            author: author, before: fields(10), after: fields(13), versionAfter: row[16].flatMap { Int($0) },
            batch: batch, partOf: row[21] == "t")
    }

    /// Everyone's entries, or one user's entries and their parts of imports, newest first; each
    /// branch one index range (see `PostgresHistory`, `PostgresHistoryBatch`).
    static func historySQL(_ query: HistoryQuery, select: String = "*", limited: Bool = true) -> (String, [String?]) {
        var parameters: [String?] = []
        func parameter(_ value: String?) -> String {
            parameters.append(value)
            return "$\(parameters.count)"
        }
        var common: [String] = []
        if let uid = query.actorUID { common.append("h.actor_uid = \(parameter(String(uid)))::bigint") }
        if let since = query.since {
            common.append("h.at >= to_timestamp(\(parameter(String(since.timeIntervalSince1970)))::double precision)")
        }
        if let before = query.before { common.append("h.entry < \(parameter(String(before)))::bigint") }
        if let after = query.after { common.append("h.entry > \(parameter(String(after)))::bigint") }
        switch query.via {
        case nil: break
        case .anotherDaemon?:
            common.append("h.daemon IS NOT NULL AND h.daemon IS DISTINCT FROM \(parameter(query.seenFrom))")
        case let via?:
            let daemon = query.seenFrom.map { " AND (h.daemon IS NULL OR h.daemon = \(parameter($0)))" } ?? ""
            common.append("h.via = \(parameter(via.rawValue))" + daemon)
        }
        func clause(_ conditions: [String]) -> String {
            conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        }
        let kind = query.kind.map { ["h.kind = \(parameter($0.rawValue))"] } ?? []
        var sql: String
        if let user = query.userID {
            let id = parameter(user.uuidString)
            let partKind = query.kind.map { kind in
                ["(\(parameter(kind.rawValue)) = 'imported' OR p.kind = \(parameter(kind.rawValue)))"]
            } ?? []
            sql = """
                SELECT \(select) FROM (
                    SELECT \(historyColumns) FROM history h \(clause(["h.user_id = \(id)::uuid"] + common + kind))
                    UNION ALL
                    SELECT \(partColumns) FROM history_parts p JOIN history h ON h.entry = p.entry
                    \(clause(["p.user_id = \(id)::uuid"] + common + partKind))
                ) AS found
                """
        } else {
            sql = "SELECT \(select) FROM (SELECT \(historyColumns) FROM history h \(clause(common + kind))) AS found"
        }
        if limited { sql += " ORDER BY entry DESC LIMIT \(parameter(String(max(1, query.limit) + 1)))::bigint" }
        return (sql, parameters)
    }

    /// Newest first below `query.before`.
    public func history(_ query: HistoryQuery) async throws(UserError) -> HistoryPage {
        let limit = max(1, query.limit)
        let (sql, parameters) = Self.historySQL(query)
        let (rows, entries) = try await read { connection throws(PGError) -> ([[String?]], [HistoryEntry]) in
            let rows = try connection.query(sql, parameters, "reading the history").rows
            return (rows, try Self.completingParts(rows.prefix(limit).map(Self.historyEntry), connection))
        }
        return HistoryPage(entries: entries, next: rows.count > limit ? entries.last?.id : nil)
    }

    public func historyCount(_ query: HistoryQuery, below entry: Int64) async throws(UserError) -> Int {
        var rest = query
        rest.before = entry
        let (sql, parameters) = Self.historySQL(rest, select: "count(*)", limited: false)
        return try await read { connection throws(PGError) -> Int in
            Int(try connection.query(sql, parameters, "counting the history").first?[0] ?? "0") ?? 0
        }
    }

    public func historyEntry(_ id: Int64) async throws(UserError) -> HistoryEntry {
        let row = try await read { connection throws(PGError) -> [String?]? in
            try connection.query("SELECT \(Self.historyColumns) FROM history h WHERE h.entry = $1::bigint",
                                 [String(id)], "reading a history entry").first
        }
        guard let row else { throw .noHistoryEntry(entry: id) }
        return Self.historyEntry(row)
    }

    /// Fills in the fields after of a user's parts of imports: the next entry's `before` for
    /// that user (an entry of its own or a part of a later import), or the user as stored now.
    static func completingParts(_ entries: [HistoryEntry],
                                _ connection: PGConnection) throws(PGError) -> [HistoryEntry] {
        var completed = entries
        for index in completed.indices where completed[index].partOf && completed[index].kind != .removed {
            guard let userID = completed[index].userID else { continue }
            let next = try connection.query("""
                SELECT before_name, before_email, before_avatar_url FROM (
                    (SELECT entry, before_name, before_email, before_avatar_url FROM history
                     WHERE user_id = $1::uuid AND entry > $2::bigint ORDER BY entry LIMIT 1)
                    UNION ALL
                    (SELECT entry, before_name, before_email, before_avatar_url FROM history_parts
                     WHERE user_id = $1::uuid AND entry > $2::bigint ORDER BY entry LIMIT 1)
                ) AS later ORDER BY entry LIMIT 1
                """, [userID.uuidString, String(completed[index].id)], "reading the history").first
            if let next {
                if let name = next[0] {
                    completed[index].after = UserFields(name: name, email: next[1] ?? "", avatarURL: next[2])
                }
            } else if let user = try stored(id: userID, connection) {
                completed[index].after = UserFields(user)
                completed[index].versionAfter = user.version
            }
        }
        return completed
    }

    /// In batches, each its own transaction, so writers never wait long behind it. Any daemon
    /// may prune: the cutoff is the same for all with the same `history-days`.
    public func pruneHistory(before cutoff: Date) async throws(UserError) -> Int {
        var total = 0
        while true {
            let (deleted, partsLeft) = try await read { connection throws(PGError) -> (Int, Bool) in
                let deleted = try connection.query("""
                    DELETE FROM history WHERE entry IN
                        (SELECT entry FROM history WHERE at < to_timestamp($1::double precision)
                         ORDER BY at LIMIT $2::bigint)
                    """, [String(cutoff.timeIntervalSince1970), String(Self.historyPruneBatch)],
                    "pruning the history").affected
                // An import's parts go with it, a batch at a time: the ones whose entry is gone.
                let parts = try connection.query("""
                    DELETE FROM history_parts WHERE (entry, user_id) IN
                        (SELECT p.entry, p.user_id FROM history_parts p
                         WHERE p.entry < COALESCE((SELECT min(entry) FROM history), 9223372036854775807)
                         ORDER BY p.entry LIMIT $1::bigint)
                    """, [String(Self.historyPruneBatch)], "pruning the history").affected
                return (deleted, parts == Self.historyPruneBatch)
            }
            total += deleted
            if deleted < Self.historyPruneBatch && !partsLeft { return total }
        }
    }

    static let historyPruneBatch = 10_000
}
