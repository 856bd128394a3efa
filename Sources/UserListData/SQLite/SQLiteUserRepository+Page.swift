import Foundation
import UserListDomain

extension SQLiteUserRepository {
    /// One keyset page after `cursor` (forward) or before it (backward), in list order. With a
    /// `byteBudget` (an export's page) the page also ends before the first user that would take
    /// it past the budget (`UserExportSize.lowerBound`, at least one user): rows are stepped one
    /// at a time, so the rows after it are never read.
    func readPage(cursor: PageCursor?, backward: Bool, limit requested: Int, search text: String?,
                  byteBudget: Int? = nil) throws(UserError) -> UserPage {
        let limit = max(1, requested)
        var search = text.flatMap(SQLiteSearch.init)
        let after: KeysetCursor?
        if let cursor {
            guard let decoded = KeysetCursor(cursor) else {
                throw .unavailable(reason: "the page cursor is not one this store made (was the source changed?)")
            }
            after = decoded
        } else {
            after = nil
        }
        return try read { connection throws(SQLiteError) -> UserPage in
            try connection.readTransaction("reading a page of users") { () throws(SQLiteError) -> UserPage in
                if search != nil { search?.indexedThrough = try SQLiteSearchIndex.indexedThrough(connection, "reading a page of users") }
                // Narrow searches read their few candidates by rowid and sort them; the `+`s keep
                // SQLite from walking the whole name index in order instead.
                let narrow = try search?.isNarrow(connection, limit: limit) ?? false
                var conditions = search?.conditions(narrow: narrow) ?? []
                let past = backward ? "<" : ">"
                if after != nil {
                    conditions.append(narrow ? "(+name_key \(past) ?3 OR (+name_key = ?3 AND +id \(past) ?4))" : "(name_key, id) \(past) (?3, ?4)")
                }
                let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
                let direction = backward ? " DESC" : ""
                let order = narrow ? "+name_key\(direction), +id\(direction)" : "name_key\(direction), id\(direction)"
                let page = try connection.statement(
                    "SELECT \(Self.columns), name_key FROM users \(whereClause) ORDER BY \(order) LIMIT ?5")
                defer { page.reset() }
                search?.bind(page, narrow: narrow)
                if let after {
                    page.bind(3, after.nameKey)
                    page.bind(4, after.id)
                }
                page.bind(5, limit + 1)
                var users: [User] = []
                users.reserveCapacity(limit)
                var lastKey = ""
                var more = false
                var bytes = 0
                while try page.step("reading a page of users") {
                    if users.count == limit { more = true; break }
                    let user = Self.user(from: page)
                    if let byteBudget {
                        bytes += UserExportSize.lowerBound(user)
                        if bytes > byteBudget && !users.isEmpty { more = true; break }
                    }
                    users.append(user)
                    lastKey = page.text(5)
                }
                // Unfiltered: the trigger-kept row count, O(1). Narrow search: counted exactly on
                // the first page, then carried in the cursor. Broad search: counted on the first
                // page when the store is small enough for that to be cheap, else nil (unknown).
                let total: Int?
                if let search {
                    if let carried = after?.total {
                        total = carried
                    } else if narrow {
                        total = after == nil && !more ? users.count : try search.exactCount(connection)
                    } else if after == nil && !more {
                        total = users.count
                    } else {
                        total = try search.broadCount(connection)
                    }
                } else {
                    total = try connection.integer("SELECT user_count FROM store_state WHERE only = 1", "counting users")
                }
                // The row read last is the page's edge on the side it continues.
                let edge = more
                    ? KeysetCursor(nameKey: lastKey, id: users[users.count - 1].id.uuidString, total: total).pageCursor
                    : nil
                if backward { return UserPage(users: users.reversed(), next: nil, previous: edge, totalCount: total) }
                return UserPage(users: users, next: edge, totalCount: total)
            }
        }
    }
}
