import Foundation
import Synchronization
import UserListDomain
import ThreadLocks

/// The users in a PostgreSQL database that several daemons (on several hosts) share.
///
/// - Contract: the same as `SQLiteUserRepository`: keyset pages ordered by the folded name
///   (`UserKey.fold`, computed in Swift so both stores agree) then id; search by substring of
///   the folded name or email (`TextKey.matches`); optimistic concurrency by `version`; emails
///   unique case-insensitively (a clash is `.conflict` carrying the user who has that email);
///   all-or-nothing imports.
/// - Concurrency: a `PGPool` of a few connections, each confined to its own serial queue;
///   sessions await, never block.
/// - Changes: every write logs its change in `changes` and `NOTIFY`s in its own transaction,
///   under a transaction advisory lock so `seq` order is commit order (see `PostgresSchema`).
/// - Errors: a server that is down or restarting surfaces as `.unavailable` naming the server
///   (password removed); the next call reconnects.
public final class PostgresUserRepository: UserRepository {
    public let connection: PGConnectionString
    let pool: PGPool
    private let commitObservers = Lock<[@Sendable (PostgresCommit) -> Void]>([])
    let writesSincePrune = Atomic<Int>(0)
    /// The mean `UserExportSize.lowerBound` of the last export page read: how many rows the next
    /// page's COPY asks for (`PostgresUserRepository+Export`). Only a hint.
    let exportRowBytes = Atomic<Int>(256)
    let exportReadAhead = ExportReadAhead()
    /// Imports stage one chunk at a time (`PostgresImportStaging.stage`).
    let stagingTurns = AsyncTurns()

    /// Connects (failing with `.unavailable` when the server cannot be reached) and migrates the
    /// schema under the migration advisory lock.
    public init(connection: PGConnectionString, poolSize: Int = 3) throws(UserError) {
        self.connection = connection
        pool = PGPool(conninfo: connection.value, server: connection.redacted, size: poolSize)
        do {
            try pool.performAndWait { connection throws(PGError) in
                try PostgresSchema.checkEncoding(connection)
                try PostgresSchema.migrate(connection)
                try PostgresImportStaging.recover(connection)
            }
        } catch {
            throw error.userError
        }
    }

    deinit { pool.close() }

    static let columns = "id, name, email, avatar_url, version"

    static func user(_ row: [String?], at first: Int = 0) -> User {
        User(id: UUIDText.parse(row[first] ?? "") ?? UUID(), name: row[first + 1] ?? "", email: row[first + 2] ?? "",
             avatarURL: row[first + 3], version: Int(row[first + 4] ?? "") ?? 0)
    }

    func read<T: Sendable>(
        _ body: @escaping @Sendable (PGConnection) throws(PGError) -> T
    ) async throws(UserError) -> T {
        do {
            return try await pool.perform { connection throws(PGError) -> T in
                try connection.read { () throws(PGError) -> T in try body(connection) }
            }
        } catch {
            throw error.userError
        }
    }

    // MARK: reading

    /// `%term%` with LIKE's own characters (`\\`, `%`, `_`) escaped (backslash is LIKE's default escape).
    static func likePattern(_ key: String) -> String {
        var escaped = ""
        for character in key {
            if character == "\\" || character == "%" || character == "_" { escaped.append("\\") }
            escaped.append(character)
        }
        return "%" + escaped + "%"
    }

    public func fetchPage(_ request: PageRequest) async throws(UserError) -> UserPage {
        try await readPage(from: request.after, backward: false, limit: request.limit, search: request.search)
    }

    /// The forward page's query turned round (`<` the cursor, descending), then reversed: the
    /// list's end is an index range read from its top.
    public func fetchPage(_ request: BackwardPageRequest) async throws(UserError) -> UserPage {
        try await readPage(from: request.before, backward: true, limit: request.limit, search: request.search)
    }

    /// One keyset page after `cursor` (or before it, `backward`), in list order either way.
    private func readPage(from cursor: PageCursor?, backward: Bool, limit requested: Int,
                          search term: String?) async throws(UserError) -> UserPage {
        let limit = max(1, requested)
        // Substring search, as the SQLite store and `TextKey.matches` define it: the folded term
        // anywhere in the folded name or email; LIKE on the "C"-collated keys, which the pg_trgm
        // GIN indexes serve for terms of three characters or more.
        let search = term.map(UserKey.fold).flatMap { $0.isEmpty ? nil : Self.likePattern($0) }
        var keyset: KeysetCursor?
        if let cursor {
            guard let decoded = KeysetCursor(cursor) else {
                throw .unavailable(reason: "the page cursor is not one this store made (was the source changed?)")
            }
            keyset = decoded
        }
        return try await read { [keyset] connection throws(PGError) -> UserPage in
            var parameters: [String?] = []
            var conditions: [String] = []
            if let search {
                parameters.append(search)
                conditions.append("(name_key LIKE $1 OR email_key LIKE $1)")
            }
            if let keyset {
                let past = backward ? "<" : ">"
                conditions.append("(name_key, id) \(past) ($\(parameters.count + 1), $\(parameters.count + 2)::uuid)")
                parameters += [keyset.nameKey, keyset.id]
            }
            parameters.append(String(limit + 1))
            let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            let order = backward ? "name_key DESC, id DESC" : "name_key, id"
            let sql = "SELECT \(Self.columns), name_key FROM users \(whereClause) ORDER BY \(order) "
                + "LIMIT $\(parameters.count)"
            let rows = try connection.query(sql, parameters, "reading a page of users").rows
            let more = rows.count > limit
            let users = rows.prefix(limit).map { Self.user($0) }
            let total: Int?
            if search != nil, let carried = keyset?.total {
                total = carried
            } else {
                total = try Self.total(matching: search, limit: limit, connection)
            }
            // The cursor that continues in the direction read: past the last row fetched.
            let onward = more
                ? KeysetCursor(nameKey: rows[limit - 1][5] ?? "", id: users[limit - 1].id.uuidString,
                               total: total).pageCursor
                : nil
            return backward
                ? UserPage(users: users.reversed(), next: nil, previous: onward, totalCount: total)
                : UserPage(users: users, next: onward, totalCount: total)
        }
    }

    /// How many users a page's list holds: all of them, or those matching `pattern` (a LIKE
    /// pattern of the folded term). A search is counted where counting is cheap, as the SQLite
    /// store does: exactly in a store of at most `broadCountLimit` users; in a bigger one only a
    /// term the trigram index serves (three characters or more) with at most `countCap` matches;
    /// otherwise the total is unknown (nil) rather than a scan of every row for each page.
    static func total(matching pattern: String?, limit: Int, _ connection: PGConnection) throws(PGError) -> Int? {
        let stored = Int(try connection.query("SELECT user_count FROM store_state", [], "counting users")
            .first?[0] ?? "0") ?? 0
        guard let pattern else { return stored }
        let condition = "name_key LIKE $1 OR email_key LIKE $1"
        if stored <= broadCountLimit {
            return Int(try connection.query("SELECT COUNT(*) FROM users WHERE \(condition)", [pattern],
                                            "counting users").first?[0] ?? "0") ?? 0
        }
        guard termLength(ofPattern: pattern) >= 3 else { return nil }
        let cap = max(2_000, Int(Double(max(1, limit) * stored).squareRoot()))
        let counted = Int(try connection.query(
            "SELECT COUNT(*) FROM (SELECT 1 FROM users WHERE \(condition) LIMIT $2) AS m",
            [pattern, String(cap + 1)], "counting users").first?[0] ?? "0") ?? 0
        return counted <= cap ? counted : nil
    }

    /// The characters of the term inside a `likePattern` (`%term%`, with `\` escaping).
    static func termLength(ofPattern pattern: String) -> Int {
        var count = 0
        var escaped = false
        for scalar in pattern.unicodeScalars.dropFirst().dropLast() {
            if scalar == "\\" && !escaped {
                escaped = true
                continue
            }
            escaped = false
            count += 1
        }
        return count
    }

    /// Above this many users a broad search's total is not counted (see `total(matching:)`).
    static let broadCountLimit = 50_000

    /// The keyset position of `user` (its folded name and id), as a page would have made it:
    /// a list that trims rows past its loaded pages continues from here.
    public func cursor(after user: User, totalCount: Int?) -> PageCursor? {
        KeysetCursor(nameKey: UserKey.fold(user.name), id: user.id.uuidString, total: totalCount).pageCursor
    }

    public func fetchUser(id: UUID) async throws(UserError) -> User {
        let found = try await read { connection throws(PGError) -> User? in try Self.stored(id: id, connection) }
        guard let found else { throw .notFound(id: id) }
        return found
    }

    /// `locking`: `FOR UPDATE`, inside a write's transaction (no other write of it until the commit).
    static func stored(id: UUID, locking: Bool = false, _ connection: PGConnection) throws(PGError) -> User? {
        try connection.query("SELECT \(columns) FROM users WHERE id = $1" + (locking ? " FOR UPDATE" : ""),
                             [id.uuidString], "reading a user").first.map { user($0) }
    }

    static func owner(ofEmail email: String, _ connection: PGConnection) throws(PGError) -> User? {
        try connection.query("SELECT \(columns) FROM users WHERE email_key = $1", [UserKey.fold(email)],
                             "reading a user").first.map { user($0) }
    }

    // MARK: commits and the change log

    /// Called after every successful write of this instance, off the connection's queue: the
    /// change feed delivers our own commits at once, without the NOTIFY round trip.
    func onCommit(_ observer: @escaping @Sendable (PostgresCommit) -> Void) {
        commitObservers.withLock { $0.append(observer) }
    }

    func notifyCommitted(_ commit: PostgresCommit) {
        for observer in commitObservers.withLock({ $0 }) { observer(commit) }
    }

    static let pruneEvery = 500
    /// The change log keeps at least this many rows...
    static let changesKept = 10_000
    /// ...and every row younger than this, so a daemon cut off for a while still resumes.
    static let changesMinimumAgeSeconds = 600

    /// Deletes old change rows and records how far, so a feed behind that point resyncs.
    static func prune(_ connection: PGConnection) throws(PGError) {
        try connection.query("""
            WITH gone AS (
                DELETE FROM changes
                WHERE seq <= (SELECT MAX(seq) FROM changes) - $1 AND at < now() - make_interval(secs => $2)
                RETURNING seq
            )
            UPDATE store_state SET pruned_through = GREATEST(pruned_through, (SELECT MAX(seq) FROM gone))
            WHERE EXISTS (SELECT 1 FROM gone)
            """, [String(changesKept), String(changesMinimumAgeSeconds)], "pruning the change log")
    }

    // MARK: for the benchmark and tests

    /// The cursor after the `index`-th user (0-based) in list order, found with OFFSET once:
    /// for setting up benchmarks, never for serving pages.
    package func cursor(afterIndex index: Int) async throws(UserError) -> PageCursor? {
        try await read { connection throws(PGError) -> PageCursor? in
            guard let row = try connection.query(
                "SELECT name_key, id FROM users ORDER BY name_key, id LIMIT 1 OFFSET $1",
                [String(index)], "positioning a cursor").first else { return nil }
            return KeysetCursor(nameKey: row[0] ?? "", id: (row[1] ?? "").uppercased(), total: nil).pageCursor
        }
    }

    /// PostgreSQL's plan for a statement, for tests that pin index use.
    package func queryPlan(_ sql: String) async throws(UserError) -> [String] {
        try await read { connection throws(PGError) -> [String] in
            try connection.query("EXPLAIN " + sql, [], "explaining a query").rows.map { $0[0] ?? "" }
        }
    }
}

/// One commit of a `PostgresUserRepository` in this process: its change-log `seq` and the
/// change (`nil` for an import: the feed reads those from the log).
struct PostgresCommit: Sendable {
    let seq: Int
    let change: UserChange?
}
