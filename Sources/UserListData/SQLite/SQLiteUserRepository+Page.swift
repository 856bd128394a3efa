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
        let after = try Self.keysetCursor(cursor)
        return try read { connection throws(SQLiteError) -> UserPage in
            try connection.readTransaction("reading a page of users") { () throws(SQLiteError) -> UserPage in
                if search != nil {
                    search?.indexedThrough = try SQLiteSearchIndex.indexedThrough(connection, "reading a page of users")
                }
                // Narrow searches read their few candidates by rowid and sort them; the `+`s keep
                // SQLite from walking the whole name index in order instead.
                let narrow = try search?.isNarrow(connection, limit: limit) ?? false
                let page = try Self.pageStatement(connection, search: search, narrow: narrow, after: after,
                                                  backward: backward, limit: limit)
                defer { page.reset() }
                let rows = try Self.pageRows(page, limit: limit, byteBudget: byteBudget)
                let total = try Self.pageTotal(connection, search: search, narrow: narrow, after: after,
                                               rows: rows)
                // The row read last is the page's edge on the side it continues.
                let edge = rows.more
                    ? KeysetCursor(nameKey: rows.lastKey, id: rows.users[rows.users.count - 1].id.uuidString,
                                   total: total).pageCursor
                    : nil
                if backward {
                    return UserPage(users: rows.users.reversed(), next: nil, previous: edge, totalCount: total)
                }
                return UserPage(users: rows.users, next: edge, totalCount: total)
            }
        }
    }

    /// The keyset position a page cursor of this store holds (nil: from the start).
    private static func keysetCursor(_ cursor: PageCursor?) throws(UserError) -> KeysetCursor? {
        guard let cursor else { return nil }
        guard let decoded = KeysetCursor(cursor) else {
            throw .unavailable(reason: "the page cursor is not one this store made (was the source changed?)")
        }
        return decoded
    }

    /// The page's query, bound: the search's conditions, past `after` in the page's direction,
    /// one row more than `limit` (to learn whether there are more).
    private static func pageStatement(_ connection: SQLiteConnection, search: SQLiteSearch?, narrow: Bool,
                                      after: KeysetCursor?, backward: Bool,
                                      limit: Int) throws(SQLiteError) -> SQLiteStatement {
        var conditions = search?.conditions(narrow: narrow) ?? []
        let past = backward ? "<" : ">"
        if after != nil {
            conditions.append(narrow
                ? "(+name_key \(past) ?3 OR (+name_key = ?3 AND +id \(past) ?4))"
                : "(name_key, id) \(past) (?3, ?4)")
        }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let direction = backward ? " DESC" : ""
        let order = narrow ? "+name_key\(direction), +id\(direction)" : "name_key\(direction), id\(direction)"
        let page = try connection.statement(
            "SELECT \(Self.columns), name_key FROM users \(whereClause) ORDER BY \(order) LIMIT ?5")
        search?.bind(page, narrow: narrow)
        if let after {
            page.bind(3, after.nameKey)
            page.bind(4, after.id)
        }
        page.bind(5, limit + 1)
        return page
    }

    /// The page's users, stepped one at a time up to `limit` (or the byte budget); `more` when a
    /// row was left, `lastKey` the name key of the last user taken.
    private static func pageRows(_ page: SQLiteStatement, limit: Int,
                                 byteBudget: Int?) throws(SQLiteError) -> (users: [User], lastKey: String, more: Bool) {
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
        return (users, lastKey, more)
    }

    /// Unfiltered: the trigger-kept row count, O(1). Narrow search: counted exactly on the first
    /// page, then carried in the cursor. Broad search: counted on the first page when the store is
    /// small enough for that to be cheap, else nil (unknown).
    private static func pageTotal(_ connection: SQLiteConnection, search: SQLiteSearch?, narrow: Bool,
                                  after: KeysetCursor?,
                                  rows: (users: [User], lastKey: String, more: Bool)) throws(SQLiteError) -> Int? {
        guard let search else {
            return try connection.integer("SELECT user_count FROM store_state WHERE only = 1", "counting users")
        }
        if let carried = after?.total { return carried }
        if narrow { return after == nil && !rows.more ? rows.users.count : try search.exactCount(connection) }
        if after == nil && !rows.more { return rows.users.count }
        return try search.broadCount(connection)
    }
}
