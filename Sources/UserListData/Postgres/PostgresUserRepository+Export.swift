import Foundation
import Synchronization
import UserListDomain

/// `export_page` on PostgreSQL: the keyset page's own query run as `COPY (SELECT ...) TO
/// STDOUT`, so rows stream to the daemon as the server reads them and are decoded in place
/// (`PGCopyRow`), instead of a result set held whole by libpq and copied into an array of
/// strings a row.
///
/// A page ends at `limit` users or before the first user that would take it past the byte
/// budget (counted by `UserExportSize.lowerBound`; the session then cuts exactly, which keeps
/// the same users unless escapes make them longer), so it holds ~5,000 sample users, not the
/// 10,000 asked for, and its `next` is the one the session sends (the read ahead waits there).
/// Reading 10,000 to keep 5,000 was half the server's work (each row is a random heap page: the
/// table is not in name order), so the COPY asks for
/// about as many rows as the budget holds at the last page's mean size (`exportRowBytes`), an
/// eighth more, and reads on from where it stopped in the rare page that needs more.
///
/// COPY takes no parameters: the only values inlined are the search pattern and the cursor's
/// folded name (each quoted by libpq's `PQescapeLiteral`), the cursor's id (parsed as a UUID and
/// written back as hex digits) and integers.
extension PostgresUserRepository {
    public var readsExportPages: Bool { true }

    /// The page (read ahead while the previous one was sent, if it was), and the read of the
    /// page after it started (`ExportReadAhead`).
    public func exportPage(_ request: PageRequest, byteBudget: Int) async throws(UserError) -> UserPage {
        var ready: UserPage?
        if let after = request.after,
           let read = exportReadAhead.take(.init(after: after, limit: request.limit, search: request.search,
                                                 byteBudget: byteBudget)),
           case .success(let page) = await read.value {
            ready = page  // a failed read ahead is read again, now
        }
        let current: UserPage
        if let ready { current = ready } else { current = try await readExportPage(request, byteBudget: byteBudget) }
        if let next = current.next {
            let following = PageRequest(after: next, limit: request.limit, search: request.search)
            exportReadAhead.start(.init(after: next, limit: request.limit, search: request.search,
                                        byteBudget: byteBudget)) {
                do throws(UserError) {
                    return .success(try await self.readExportPage(following, byteBudget: byteBudget))
                } catch {
                    return .failure(error)
                }
            }
        }
        return current
    }

    private func readExportPage(_ request: PageRequest, byteBudget: Int) async throws(UserError) -> UserPage {
        let limit = max(1, request.limit), budget = max(0, byteBudget)
        let search = request.search.map(UserKey.fold).flatMap { $0.isEmpty ? nil : Self.likePattern($0) }
        let (keyset, start) = try Self.exportStart(request.after)
        let rowBytes = exportRowBytes.load(ordering: .relaxed)
        let page = try await read { connection throws(PGError) -> UserPage in
            let operation = "exporting a page of users"
            let filter = try search.map { pattern throws(PGError) -> String in
                let literal = try connection.literal(pattern, operation)
                return "(name_key LIKE \(literal) OR email_key LIKE \(literal))"
            }
            let rows = try Self.exportRows(filter: filter, after: start, limit: limit, budget: budget,
                                           rowBytes: rowBytes, connection, operation)
            let users = rows.users
            let total: Int?
            if search != nil, let carried = keyset?.total {
                total = carried
            } else {
                total = try Self.total(matching: search, limit: limit, connection)
            }
            let next = rows.more && !users.isEmpty
                ? KeysetCursor(nameKey: rows.last?.nameKey ?? "", id: users[users.count - 1].id.uuidString,
                               total: total).pageCursor
                : nil
            return UserPage(users: users, next: next, totalCount: total)
        }
        if !page.users.isEmpty {
            exportRowBytes.store(page.users.reduce(0) { $0 + UserExportSize.lowerBound($1) } / page.users.count,
                                 ordering: .relaxed)
        }
        return page
    }

    /// The keyset a page cursor of this store holds, and the row it continues after.
    private static func exportStart(
        _ cursor: PageCursor?
    ) throws(UserError) -> (keyset: KeysetCursor?, start: (nameKey: String, id: UUID)?) {
        guard let cursor else { return (nil, nil) }
        guard let decoded = KeysetCursor(cursor), let id = UUIDText.parse(decoded.id) else {
            throw .unavailable(reason: "the page cursor is not one this store made (was the source changed?)")
        }
        return (decoded, (decoded.nameKey, id))
    }

    /// The page's users, read by COPY in as many reads as the budget takes: up to `limit`, and
    /// ending before the first user that would take it past `budget` (at least one user). `last`
    /// is the last user kept (the next cursor's), `more` whether a row follows it.
    private static func exportRows(
        filter: String?, after start: (nameKey: String, id: UUID)?, limit: Int, budget: Int, rowBytes: Int,
        _ connection: PGConnection, _ operation: String
    ) throws(PGError) -> (users: [User], last: (nameKey: String, id: UUID)?, more: Bool) {
        var users: [User] = []
        var bytes = 0, more = false
        var last = start
        var row = PGCopyRow()
        while true {
            // Rows for what is left of the budget at the mean size, an eighth more.
            let expected = (budget - bytes) / max(UserExportSize.perUser, rowBytes) + 1
            let asked = min(limit - users.count, expected + expected / 8 + 16)
            let sql = try exportSQL(filter: filter, after: last, limit: asked + 1, connection, operation)
            var received = 0, full = false, past = false
            try connection.copyOutRows(sql, operation) { bytesOfRow in
                received += 1
                if full { past = true; return }
                row.split(bytesOfRow)
                guard row.count == 6, let id = row.uuid(0) else { return }
                let user = User(id: id, name: row.string(1) ?? "", email: row.string(2) ?? "",
                                avatarURL: row.string(3), version: row.int(4) ?? 0)
                let size = UserExportSize.lowerBound(user)
                if !users.isEmpty && bytes + size > budget {
                    (full, past) = (true, true)  // the first user that does not fit: the next page's
                    return
                }
                users.append(user)
                last = (row.string(5) ?? "", id)
                bytes += size
                full = users.count == limit
            }
            let exhausted = received <= asked  // the list ended inside this read
            if full {
                // A row after the last one kept, or none left; otherwise ask whether one follows.
                more = past
                if !past && !exhausted { more = try anyRow(filter: filter, after: last, connection, operation) }
                break
            }
            if exhausted { break }
        }
        return (users, last, more)
    }

    /// The keyset page's COPY: the users matching `filter` after `after` in list order, at most
    /// `limit`, with `name_key` (the next cursor's) after the user's five columns.
    static func exportSQL(filter: String?, after: (nameKey: String, id: UUID)?, limit: Int,
                          _ connection: PGConnection, _ operation: String) throws(PGError) -> String {
        var conditions = filter.map { [$0] } ?? []
        if let after {
            let nameKey = try connection.literal(after.nameKey, operation)
            conditions.append("(name_key, id) > (\(nameKey), '\(UUIDText.lowercase(after.id))'::uuid)")
        }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        return "COPY (SELECT \(columns), name_key FROM users \(whereClause) ORDER BY name_key, id LIMIT \(limit))"
            + " TO STDOUT"
    }

    /// Whether any user matching `filter` follows `after`.
    private static func anyRow(filter: String?, after: (nameKey: String, id: UUID)?,
                               _ connection: PGConnection, _ operation: String) throws(PGError) -> Bool {
        var found = false
        let sql = try exportSQL(filter: filter, after: after, limit: 1, connection, operation)
        try connection.copyOutRows(sql, operation) { _ in
            found = true
        }
        return found
    }
}
