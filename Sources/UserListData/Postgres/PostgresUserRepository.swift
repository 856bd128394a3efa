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
    private let writesSincePrune = Atomic<Int>(0)
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

    static func stored(id: UUID, _ connection: PGConnection) throws(PGError) -> User? {
        try connection.query("SELECT \(columns) FROM users WHERE id = $1", [id.uuidString], "reading a user")
            .first.map { user($0) }
    }

    static func owner(ofEmail email: String, _ connection: PGConnection) throws(PGError) -> User? {
        try connection.query("SELECT \(columns) FROM users WHERE email_key = $1", [UserKey.fold(email)],
                             "reading a user").first.map { user($0) }
    }

    // MARK: writing

    enum Outcome: Sendable {
        case done(User, seq: Int)
        case conflict(User)
        case notFound
        case emailTaken(String)
        /// A save that would change nothing: no write, no entry, no change; the stored user.
        case unchanged(User)
    }

    /// Runs `body` in a transaction on a pool connection; `body` logs its change last
    /// (`logChange`, which takes the change-log lock: see `PostgresSchema.lockChangeLog`).
    /// A clash on the unique email index comes back as `.emailTaken` (the transaction is rolled
    /// back first), so the caller can look up who has it.
    func write(_ operation: String, _ body: @escaping @Sendable (PGConnection) throws(PGError) -> Outcome,
                       email: String?) async throws(UserError) -> Outcome {
        let receipt = CommitReceipt.current
        do {
            return try await pool.perform { connection throws(PGError) -> Outcome in
                let outcome: Outcome
                do throws(PGError) {
                    outcome = try connection.transaction(operation) { () throws(PGError) -> Outcome in
                        let outcome = try body(connection)
                        // Before COMMIT: the NOTIFY goes out with it, and the feed may read the
                        // row before this thread hears that the commit is done.
                        if case .done(_, let seq) = outcome { receipt?.record(seq) }
                        return outcome
                    }
                } catch where error.isUniqueViolation && error.constraint == "users_email_key_unique" {
                    return .emailTaken(email ?? "")
                }
                if self.writesSincePrune.add(1, ordering: .relaxed).newValue >= Self.pruneEvery {
                    self.writesSincePrune.store(0, ordering: .relaxed)
                    try? Self.prune(connection)
                }
                return outcome
            }
        } catch {
            throw error.userError
        }
    }

    /// The user who already has `email`, as the conflict to report.
    private func emailConflict(_ email: String, id: UUID) async throws(UserError) -> UserError {
        let owner = try await read { connection throws(PGError) -> User? in try Self.owner(ofEmail: email, connection) }
        if let owner, owner.id != id { return .conflict(stored: owner) }
        return .unavailable(reason: "the email \(email) was taken by someone else while saving; try again")
    }

    /// Logs a write's change (its `seq`) under the change-log lock, once its rows are written.
    static func logChange(_ kind: String, id: UUID, user: User?, _ connection: PGConnection,
                          _ operation: String) throws(PGError) -> Int {
        try PostgresSchema.lockChangeLog(connection, operation)
        let seq = try connection.query("""
            INSERT INTO changes (kind, user_id, name, email, avatar_url, version)
            VALUES ($1, $2, $3, $4, $5, $6) RETURNING seq
            """, [kind, id.uuidString, user?.name, user?.email, user?.avatarURL, user.map { String($0.version) }],
            operation)
        try connection.query("SELECT pg_notify($1, '')", [PostgresSchema.channel], operation)
        return Int(seq.first?[0] ?? "0") ?? 0
    }

    public func update(_ user: User) async throws(UserError) -> User { try await update(user, by: .unattributed) }
    public func add(_ new: NewUser) async throws(UserError) -> User { try await add(new, by: .unattributed) }
    public func remove(id: UUID) async throws(UserError) { try await remove(id: id, by: .unattributed) }

    /// Saves `user` and records `author`'s entry in the same transaction (`PostgresHistory`).
    /// A save equal to the stored row writes nothing and answers with the stored user.
    public func update(_ user: User, by author: ChangeAuthor) async throws(UserError) -> User {
        let outcome = try await write("saving a user", { connection throws(PGError) -> Outcome in
            let operation = "saving a user"
            try PostgresHistory.recordSave(user, author, connection, operation)
            let updated = try connection.query("""
                UPDATE users SET name = $1, email = $2, avatar_url = $3, name_key = $4, email_key = $5,
                                 version = version + 1
                WHERE id = $6 AND version = $7 AND \(PostgresHistory.differsFromStored)
                """, [user.name, user.email, user.avatarURL, UserKey.fold(user.name), UserKey.fold(user.email),
                      user.id.uuidString, String(user.version)], operation)
            guard updated.affected == 1 else {
                guard let stored = try Self.stored(id: user.id, connection) else { return .notFound }
                // Equal text is equal bytes (deterministic collation): the same row, unwritten.
                let same = stored.version == user.version && stored.name == user.name && stored.email == user.email
                    && stored.avatarURL == user.avatarURL
                return same ? .unchanged(stored) : .conflict(stored)
            }
            var saved = user
            saved.version += 1
            let seq = try Self.logChange("saved", id: user.id, user: saved, connection, operation)
            return .done(saved, seq: seq)
        }, email: user.email)
        switch outcome {
        case .done(let saved, let seq):
            notifyCommitted(PostgresCommit(seq: seq, change: .saved(saved)))
            return saved
        case .unchanged(let stored): return stored
        case .conflict(let stored): throw .conflict(stored: stored)
        case .notFound: throw .notFound(id: user.id)
        case .emailTaken(let email): throw try await emailConflict(email, id: user.id)
        }
    }

    /// A user whose id is already stored is refused as `.conflict(stored:)`, like SQLite; so is
    /// an email another user has (case-insensitively), carrying that other user.
    /// An id removed before comes back with the version after its last one, as on SQLite.
    public func add(_ new: NewUser, by author: ChangeAuthor) async throws(UserError) -> User {
        let outcome = try await write("adding a user", { connection throws(PGError) -> Outcome in
            let operation = "adding a user"
            let last = try connection.query("""
                SELECT GREATEST((SELECT max(version_after) FROM history WHERE user_id = $1),
                                (SELECT max(version_after) FROM history_parts WHERE user_id = $1), 0)
                """, [new.id.uuidString], operation).first?[0].flatMap { Int($0) } ?? 0
            let user = User(id: new.id, name: new.name, email: new.email, avatarURL: new.avatarURL, version: last + 1)
            let inserted = try connection.query("""
                INSERT INTO users (id, name, email, avatar_url, version, name_key, email_key)
                VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING
                """, [user.id.uuidString, user.name, user.email, user.avatarURL, String(user.version),
                      UserKey.fold(user.name), UserKey.fold(user.email)],
                operation)
            guard inserted.affected == 1 else {
                return try Self.stored(id: user.id, connection).map(Outcome.conflict) ?? .notFound
            }
            try PostgresHistory.recordAdd(user, author, connection, operation)
            let seq = try Self.logChange("added", id: user.id, user: user, connection, operation)
            try connection.query("UPDATE store_state SET user_count = user_count + 1", [], operation)  // under the lock
            return .done(user, seq: seq)
        }, email: new.email)
        switch outcome {
        case .done(let saved, let seq):
            notifyCommitted(PostgresCommit(seq: seq, change: .added(saved)))
            return saved
        case .conflict(let stored): throw .conflict(stored: stored)
        case .notFound, .unchanged:
            throw .unavailable(reason: "\(connection.redacted): the new user was neither added nor found")
        case .emailTaken(let email): throw try await emailConflict(email, id: new.id)
        }
    }

    public func remove(id: UUID, by author: ChangeAuthor) async throws(UserError) {
        let outcome = try await write("removing a user", { connection throws(PGError) -> Outcome in
            let operation = "removing a user"
            try PostgresHistory.recordRemove(id, author, connection, operation)
            let deleted = try connection.query("DELETE FROM users WHERE id = $1", [id.uuidString], operation)
            guard deleted.affected == 1 else { return .notFound }
            let seq = try Self.logChange("removed", id: id, user: nil, connection, operation)
            try connection.query("UPDATE store_state SET user_count = user_count - 1", [], operation)  // under the lock
            return .done(User(id: id, name: "", email: ""), seq: seq)
        }, email: nil)
        switch outcome {
        case .done(_, let seq): notifyCommitted(PostgresCommit(seq: seq, change: .removed(id: id)))
        default: throw .notFound(id: id)
        }
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
