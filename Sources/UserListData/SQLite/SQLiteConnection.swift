import CSQLite
import Foundation

/// One open SQLite connection with its cache of prepared statements.
///
/// Not Sendable and not thread-safe on purpose (opened with `SQLITE_OPEN_NOMUTEX`): its owner
/// serializes every use (the store's writer queue, a reader's mutex, the feed's queue).
final class SQLiteConnection {
    let path: String
    let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]
    /// Told when a write transaction of this connection takes the write lock (true) and when it
    /// commits or rolls back (false): the store's own writes, which its change feed need not
    /// look for in the file. Inside `deferringWriteLockEnd` the end is told when that returns.
    var holdingWriteLock: ((Bool) -> Void)?
    /// Open `deferringWriteLockEnd` calls, and whether a transaction ended inside them.
    private var writeLockEndDeferrals = 0
    private var writeLockEndPending = false

    enum Mode { case readWrite, readOnly }

    /// Opens (and, read-write, creates) the database file at `path`. The directory must exist.
    init(path: String, mode: Mode, busyTimeoutMilliseconds: Int) throws(SQLiteError) {
        self.path = path
        let directory = (path as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        if !directory.isEmpty,
           !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) || !isDirectory.boolValue {
            throw .custom("the directory \(directory) does not exist; "
                          + "create it first (the store creates only the file)",
                          path: path, operation: "opening")
        }
        if mode == .readOnly, !FileManager.default.fileExists(atPath: path) {
            throw .custom("the file does not exist and the store was asked to open it read-only",
                          path: path, operation: "opening")
        }
        _ = Self.configureSQLite
        let flags = SQLITE_OPEN_NOMUTEX
            | (mode == .readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        var db: OpaquePointer?
        let code = sqlite3_open_v2(path, &db, flags, nil)
        guard let db else {
            throw .custom("out of memory", code: code, path: path, operation: "opening")
        }
        guard code == SQLITE_OK else {
            let detail = String(cString: sqlite3_errmsg(db))
            sqlite3_close_v2(db)
            throw SQLiteError(code: code, detail: detail, path: path, operation: "opening")
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, Int32(clamping: busyTimeoutMilliseconds))
        UserKey.register(on: db)
    }

    /// Process-wide settings, applied before the first connection opens (SQLite reads them once).
    private static let configureSQLite: Void = { _ = userlistd_sqlite_disable_memory_statistics() }()

    deinit {
        statements.removeAll()  // finalize before closing
        sqlite3_close_v2(handle)
    }

    /// True when SQLite could open the file for reading only (e.g. an immutable file, a
    /// read-only mount, or permissions), even though read-write was asked for.
    var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    func error(_ code: Int32, _ operation: String) -> SQLiteError {
        SQLiteError(code: code, detail: String(cString: sqlite3_errmsg(handle)), path: path, operation: operation)
    }

    /// The cached statement for `sql`, prepared on first use and reset before it is handed out.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        var raw: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard code == SQLITE_OK, let raw else { throw error(code, "preparing \(sql.prefix(60))") }
        let statement = SQLiteStatement(handle: raw, sql: sql, connection: self)
        statements[sql] = statement
        return statement
    }

    /// Runs one or more statements that return no rows (schema, pragmas, BEGIN/COMMIT).
    func execute(_ sql: String, _ operation: @autoclosure () -> String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        if code != SQLITE_OK {
            let detail = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(message)
            throw SQLiteError(code: code, detail: detail, path: path, operation: operation())
        }
    }

    /// Reads a single integer (a pragma or an aggregate).
    func integer(_ sql: String, _ operation: @autoclosure () -> String) throws(SQLiteError) -> Int {
        let statement = try statement(sql)
        defer { statement.reset() }
        guard try statement.step(operation()) else { return 0 }
        return statement.int(0)
    }

    /// Runs `body` in a transaction: committed if it returns, rolled back if it throws, so a
    /// failed write leaves the file as it was. `BEGIN IMMEDIATE` takes the write lock up front,
    /// so two writers wait (busy timeout) instead of failing half-way with SQLITE_BUSY.
    func writeTransaction<T>(_ operation: String, _ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try execute("BEGIN IMMEDIATE", operation)
        // A deferred end not told yet: still holding, as far as the listener knows.
        if writeLockEndPending { writeLockEndPending = false } else { holdingWriteLock?(true) }
        defer {
            if writeLockEndDeferrals > 0 { writeLockEndPending = true } else { holdingWriteLock?(false) }
        }
        do {
            let result = try body()
            try execute("COMMIT", operation)
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    /// Runs `body` with this connection's triggers switched off, and on again after it, however
    /// it ends: for writes whose every trigger would be a no-op (an import's merge). The switch
    /// is not DDL: other connections are untouched, and this one's statements are re-prepared
    /// at their next step.
    func withoutTriggers<T>(_ operation: String, _ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        let off = userlistd_sqlite_enable_triggers(handle, 0)
        guard off == SQLITE_OK else { throw error(off, operation) }
        defer { _ = userlistd_sqlite_enable_triggers(handle, 1) }
        return try body()
    }

    /// Runs `body`, telling the end of the write transactions it commits only once it returns:
    /// the store hands a commit's change and `seq` to its writer's receipt and to its feed
    /// first, so nothing reads the commit back from the log as someone else's in between.
    func deferringWriteLockEnd<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        writeLockEndDeferrals += 1
        defer {
            writeLockEndDeferrals -= 1
            if writeLockEndDeferrals == 0 && writeLockEndPending {
                writeLockEndPending = false
                holdingWriteLock?(false)
            }
        }
        return try body()
    }

    /// Runs `body` in a read transaction so that several queries see one snapshot.
    func readTransaction<T>(_ operation: String, _ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try execute("BEGIN DEFERRED", operation)
        defer { _ = sqlite3_exec(handle, "COMMIT", nil, nil, nil) }
        return try body()
    }

    /// Rows changed by the last INSERT/UPDATE/DELETE (not counting trigger rows).
    var changes: Int { Int(sqlite3_changes(handle)) }
}
