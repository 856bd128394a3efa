import Foundation
import UserListDomain

/// Reading and pruning the shared history (`PostgresHistory` writes it).
extension PostgresUserRepository: UserHistoryRepository {
    static let historyColumns = """
        entry, (extract(epoch FROM at) * 1000)::bigint, user_id, kind, via, actor_uid, actor_name, client, daemon, reverts,
        before_name, before_email, before_avatar_url, after_name, after_email, after_avatar_url, version_after
        """

    static func historyEntry(_ row: [String?]) -> HistoryEntry {
        func fields(_ first: Int) -> UserFields? {
            guard let name = row[first] else { return nil }
            return UserFields(name: name, email: row[first + 1] ?? "", avatarURL: row[first + 2])
        }
        let author = ChangeAuthor(
            uid: row[5].flatMap { UInt32($0) }, userName: row[6], client: row[7],
            via: ChangeVia(rawValue: row[4] ?? "") ?? .command, daemon: row[8], reverting: row[9].flatMap { Int64($0) })
        return HistoryEntry(
            id: Int64(row[0] ?? "") ?? 0, at: Date(timeIntervalSince1970: (Double(row[1] ?? "") ?? 0) / 1000),
            userID: UUIDText.parse(row[2] ?? "") ?? UUID(), kind: HistoryKind(rawValue: row[3] ?? "") ?? .saved,
            author: author, before: fields(10), after: fields(13), versionAfter: row[16].flatMap { Int($0) })
    }

    /// Newest first below `query.before`; each filter is one index range (see `PostgresHistory`).
    public func history(_ query: HistoryQuery) async throws(UserError) -> HistoryPage {
        let limit = max(1, query.limit)
        var conditions: [String] = []
        var parameters: [String?] = []
        func parameter(_ value: String) -> String {
            parameters.append(value)
            return "$\(parameters.count)"
        }
        if let user = query.userID { conditions.append("user_id = \(parameter(user.uuidString))::uuid") }
        if let uid = query.actorUID { conditions.append("actor_uid = \(parameter(String(uid)))::bigint") }
        if let since = query.since {
            conditions.append("at >= to_timestamp(\(parameter(String(since.timeIntervalSince1970)))::double precision)")
        }
        if let before = query.before { conditions.append("entry < \(parameter(String(before)))::bigint") }
        if let after = query.after { conditions.append("entry > \(parameter(String(after)))::bigint") }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let sql = "SELECT \(Self.historyColumns) FROM history \(whereClause) ORDER BY entry DESC LIMIT \(parameter(String(limit + 1)))::bigint"
        let sent = parameters
        let rows = try await read { connection throws(PGError) -> [[String?]] in
            try connection.query(sql, sent, "reading the history").rows
        }
        let entries = rows.prefix(limit).map(Self.historyEntry)
        return HistoryPage(entries: Array(entries), next: rows.count > limit ? entries.last?.id : nil)
    }

    public func historyEntry(_ id: Int64) async throws(UserError) -> HistoryEntry {
        let row = try await read { connection throws(PGError) -> [String?]? in
            try connection.query("SELECT \(Self.historyColumns) FROM history WHERE entry = $1::bigint", [String(id)],
                                 "reading a history entry").first
        }
        guard let row else { throw .noHistoryEntry(entry: id) }
        return Self.historyEntry(row)
    }

    /// In batches, each its own transaction, so writers never wait long behind it. Any daemon
    /// may prune: the cutoff is the same for all with the same `history-days`.
    public func pruneHistory(before cutoff: Date) async throws(UserError) -> Int {
        var total = 0
        while true {
            let deleted = try await read { connection throws(PGError) -> Int in
                try connection.query("""
                    DELETE FROM history WHERE entry IN
                        (SELECT entry FROM history WHERE at < to_timestamp($1::double precision) ORDER BY at LIMIT $2::bigint)
                    """, [String(cutoff.timeIntervalSince1970), String(Self.historyPruneBatch)], "pruning the history").affected
            }
            total += deleted
            if deleted < Self.historyPruneBatch { return total }
        }
    }

    static let historyPruneBatch = 10_000
}
