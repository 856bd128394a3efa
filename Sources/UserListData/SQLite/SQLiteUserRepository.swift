import CSQLite
import Foundation
import Synchronization
import UserListDomain
import ThreadLocks

/// The users, kept in one SQLite file: the daemon's store of record (or the cache in front of
/// an HTTP source, see `CachedUserRepository`).
///
/// - Order: case-insensitive name (`name_key`), then id; pages are keyset pages (no OFFSET), so
///   a page deep in a million users costs what the first one costs.
/// - Concurrency: one read-write connection owned by a serial queue (`SQLiteWriter`) and one
///   read-only connection behind a mutex. WAL lets the reader run while a write is in progress;
///   other processes may open the same file (SQLite's file locks and `busy_timeout` arbitrate).
/// - Durability: WAL with `synchronous=FULL` by default; see DURABILITY.md.
/// - Errors: every SQLite failure surfaces as `UserError.unavailable(reason:)` naming the file;
///   a failed write is rolled back, leaving the file as it was.
public final class SQLiteUserRepository: UserRepository {
    /// How to open the store. The defaults are the daemon's.
    public struct Options: Sendable {
        /// Open for reading only (`SQLITE_OPEN_READONLY`, like a `mode=ro` URI): every write
        /// then fails with `.unavailable`. The file must exist and be at the current schema.
        public var readOnly: Bool
        public var synchronous: Synchronous
        /// How long a write waits for another writer (another process) before giving up.
        public var busyTimeout: Duration
        /// A size quota in database pages (`PRAGMA max_page_count`); past it writes fail as
        /// "full". `nil`: no quota but the disk's.
        public var maxPageCount: Int?
        /// Whether this store fills the search index's backlog after a bulk load (tests turn it
        /// off to look at a store in the middle of one).
        var catchesUpSearchIndex = true
        /// Whether an import records its history (the benchmark turns it off to measure its cost).
        package var recordsImportHistory = true
        /// Tests: a merge slice's fixed size, and a pause after each slice (its number) commits.
        var mergeSliceRows: Int?
        var afterMergeSlice: (@Sendable (Int) async -> Void)?
        /// Tests: a pause after an import's first checks, before its sort and fill.
        var afterImportChecks: (@Sendable () async -> Void)?
        /// Tests: a pause after an import's reply, before its rows are deleted.
        var beforeClearingImport: (@Sendable () async -> Void)?
        /// Tests: called each time a write starts waiting for this process's merge to end.
        var whenAWriteWaitsForTheMerge: (@Sendable () -> Void)?
        /// Tests: a pause on the writer right after a write commits, before its receipt and
        /// its feed hear of it.
        var afterCommit: (@Sendable () -> Void)?

        public init(readOnly: Bool = false, synchronous: Synchronous = .full, busyTimeout: Duration = .seconds(5),
                    maxPageCount: Int? = nil) {
            self.readOnly = readOnly
            self.synchronous = synchronous
            self.busyTimeout = busyTimeout
            self.maxPageCount = maxPageCount
        }
    }

    /// `PRAGMA synchronous` in WAL mode. See DURABILITY.md for why `.full` is the default.
    public enum Synchronous: String, Sendable {
        /// A commit is on disk when `update` returns: survives process crash and power loss.
        case full = "FULL"
        /// Survives a process crash; the last commits may be lost on power loss.
        case normal = "NORMAL"
    }

    /// The database file.
    public let path: String
    let options: Options
    let writer: SQLiteWriter?
    let checkpointer: SQLiteCheckpointer?
    let bulkGate = BulkWriteGate()
    /// One import merges at a time (its slices and the guard are its own until its last slice).
    let mergeTurns = AsyncTurns()
    let importMerge = Lock(ImportMergeState())
    // Reads never wait for locks under WAL, so they run on the caller's thread under a mutex.
    private let reader: Lock<SQLiteConnection>
    let commitObservers = Lock<[@Sendable (CommitNotice) -> Void]>([])
    let writeLockObservers = Lock<[@Sendable (Bool) -> Void]>([])
    private let writesSincePrune = Atomic<Int>(0)
    /// When an import last pruned the change log (seconds since 1970): a chunked import of a
    /// million users commits a thousand times, and each prune reads the log rows younger than a
    /// minute, so imports prune at most every `importPruneSeconds`.
    let lastImportPrune = Atomic<Int>(0)
    /// Whether the search index's catch-up runs, and who waits for it (`SQLiteSearchCatchUp`).
    let searchCatchUp = Lock(SearchCatchUpState())

    /// Opens the store at `path`, creating the file if it is missing (its directory must exist)
    /// and migrating an older schema to the current one.
    public init(path: String, options: Options = Options()) throws(UserError) {
        self.path = path
        self.options = options
        var importLeftBacklog = false
        let timeout = Int(options.busyTimeout.components.seconds * 1000
                          + options.busyTimeout.components.attoseconds / 1_000_000_000_000_000)
        do {
            if options.readOnly {
                writer = nil
                checkpointer = nil
            } else {
                let connection = try SQLiteConnection(path: path, mode: .readWrite, busyTimeoutMilliseconds: timeout)
                try Self.configureWriter(connection, options)
                try SQLiteSchema.migrate(connection)
                // An import committed before a crash is finished before anything is served.
                importLeftBacklog = try SQLiteImportStaging.recover(connection)
                try Self.prune(connection)
                let checkpointer = SQLiteCheckpointer(path: path)
                checkpointer.attach(to: connection)
                self.checkpointer = checkpointer
                writer = SQLiteWriter(connection: connection, name: "userlistd-store", checkpointer: checkpointer)
            }
            let readConnection = try SQLiteConnection(path: path, mode: .readOnly, busyTimeoutMilliseconds: timeout)
            try readConnection.execute("PRAGMA cache_size = -\(Self.normalCacheKiB); PRAGMA temp_store = MEMORY",
                                       "configuring the reader")
            try SQLiteSchema.check(readConnection)
            reader = Lock(readConnection)
        } catch {
            throw error.userError
        }
        try? writer?.performAndWait { connection in  // (cannot fail: the body does not throw)
            connection.holdingWriteLock = { [weak self] held in
                guard let self else { return }
                for observer in self.writeLockObservers.withLock({ $0 }) { observer(held) }
            }
        }
        // A bulk load's catch-up that an earlier process did not finish.
        let backlog = try? read { connection throws(SQLiteError) -> Int? in
            try SQLiteSearchIndex.indexedThrough(connection, "opening")
        }
        if backlog != nil || importLeftBacklog { catchUpSearchIndex() }
    }

    private static func configureWriter(_ connection: SQLiteConnection, _ options: Options) throws(SQLiteError) {
        // The first statement reads the header: a file that is not a database fails here.
        _ = try connection.integer("PRAGMA user_version", "reading the file header")
        if connection.isReadOnly {
            throw .custom("the file cannot be opened for writing "
                          + "(permissions, the immutable attribute, or a read-only mount); "
                          + "fix that, or open the store with readOnly: true",
                          code: SQLITE_READONLY, path: connection.path, operation: "opening")
        }
        let mode = try connection.statement("PRAGMA journal_mode = WAL")
        defer { mode.reset() }
        guard try mode.step("switching to WAL"), mode.text(0).lowercased() == "wal" else {
            throw .custom("the file could not be switched to WAL mode", code: SQLITE_CANTOPEN,
                          path: connection.path, operation: "opening")
        }
        try connection.execute("""
            PRAGMA synchronous = \(options.synchronous.rawValue);
            PRAGMA cache_size = -\(Self.normalCacheKiB);
            PRAGMA temp_store = MEMORY;
            PRAGMA journal_size_limit = \(64 * 1024 * 1024);
            """, "configuring the connection")
        if let pages = options.maxPageCount {
            try connection.execute("PRAGMA max_page_count = \(pages)", "setting the size quota")
        }
    }

    // MARK: reading

    static let columns = "id, name, email, avatar_url, version"

    static func user(from row: SQLiteStatement, at first: Int32 = 0) -> User {
        User(id: row.uuid(first) ?? UUID(),
             name: row.text(first + 1), email: row.text(first + 2),
             avatarURL: row.optionalText(first + 3), version: row.int(first + 4))
    }

    func read<T: Sendable>(_ body: (SQLiteConnection) throws(SQLiteError) -> T) throws(UserError) -> T {
        do {
            return try reader.withLock { connection throws(SQLiteError) -> T in try body(connection) }
        } catch {
            throw error.userError
        }
    }

    public func fetchPage(_ request: PageRequest) async throws(UserError) -> UserPage {
        try fetchPageNow(request)
    }

    /// Reads `(name_key, id) < cursor` in descending order and turns the rows round: the list's
    /// end is an index range read from its top, as cheap as the first page.
    public func fetchPage(_ request: BackwardPageRequest) async throws(UserError) -> UserPage {
        try readPage(cursor: request.before, backward: true, limit: request.limit, search: request.search)
    }

    /// `fetchPage` without the `async`: a page read never waits for a lock (WAL), so it runs on
    /// the caller's thread.
    func fetchPageNow(_ request: PageRequest) throws(UserError) -> UserPage {
        try readPage(cursor: request.after, backward: false, limit: request.limit, search: request.search)
    }

    /// The keyset position of `user` (its folded name and id), as a page would have made it.
    public func cursor(after user: User, totalCount: Int?) -> PageCursor? {
        KeysetCursor(nameKey: UserKey.fold(user.name), id: user.id.uuidString, total: totalCount).pageCursor
    }

    public func fetchUser(id: UUID) async throws(UserError) -> User {
        let found = try read { connection throws(SQLiteError) -> User? in try Self.stored(id: id, connection) }
        guard let found else { throw .notFound(id: id) }
        return found
    }

    static func stored(id: UUID, _ connection: SQLiteConnection) throws(SQLiteError) -> User? {
        let statement = try connection.statement("SELECT \(columns) FROM users WHERE id = ?1")
        defer { statement.reset() }
        statement.bind(1, id)
        return try statement.step("reading a user") ? user(from: statement) : nil
    }

    // MARK: writing

    private enum Outcome: Sendable {
        /// Written, as change-log row `seq`.
        case done(User, seq: Int)
        case conflict(User)
        case notFound
        /// A save that would change nothing: no write, no entry, no change; the stored user.
        case unchanged(User)
    }

    /// Runs `body` (which commits) on the writer queue, then, still there, tells the commit
    /// observers what `committed` says it changed: so the change feed delivers it before the
    /// writer takes its next write, and before the caller resumes.
    func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws(SQLiteError) -> T,
                                    committed: @escaping @Sendable (T) -> CommitNotice?) async throws(UserError) -> T {
        guard let writer else {
            throw .unavailable(reason: "\(path) was opened read-only; nothing was written")
        }
        let receipt = CommitReceipt.current
        do {
            return try await writer.perform { connection throws(SQLiteError) -> T in
                // The feed's other path (the watcher reading the log) stays off until the
                // receipt and the feed have the commit: it would deliver it as someone else's.
                let value = try connection.deferringWriteLockEnd { () throws(SQLiteError) -> T in
                    let value = try body(connection)
                    self.options.afterCommit?()
                    if let notice = committed(value) {
                        if let receipt { Self.record(notice, on: receipt, connection) }
                        self.notifyCommitted(notice)
                    }
                    return value
                }
                if self.writesSincePrune.add(1, ordering: .relaxed).newValue >= Self.pruneEvery {
                    self.writesSincePrune.store(0, ordering: .relaxed)
                    try? Self.prune(connection)
                }
                return value
            }
        } catch {
            throw error.userError
        }
    }

    /// The `seq` of the newest change-log row: read inside a write's transaction, it is the row
    /// the write's trigger just logged.
    private static func loggedSeq(_ connection: SQLiteConnection, _ operation: String) throws(SQLiteError) -> Int {
        try connection.integer("SELECT MAX(seq) FROM changes", operation)
    }

    public func update(_ user: User) async throws(UserError) -> User { try await update(user, by: .unattributed) }
    public func add(_ new: NewUser) async throws(UserError) -> User { try await add(new, by: .unattributed) }
    public func remove(id: UUID) async throws(UserError) { try await remove(id: id, by: .unattributed) }

    /// Saves `user` and records `author`'s entry in the same transaction (`SQLiteHistory`).
    /// The stored row is read once (`SaveRead`): it is the conflict check, the entry's before,
    /// and it says which keys change, so the UPDATE names only those (`saveStatement`). A save
    /// equal to the stored row byte for byte writes nothing and answers with the stored user.
    public func update(_ user: User, by author: ChangeAuthor) async throws(UserError) -> User {
        let outcome = try await guardedWrite { connection throws(SQLiteError) -> Outcome in
            try connection.writeTransaction("saving a user") { () throws(SQLiteError) -> Outcome in
                guard let stored = try Self.readForSave(user, connection) else { return .notFound }
                guard stored.user.version == user.version else { return .conflict(stored.user) }
                if stored.changesNothing(user) { return .unchanged(stored.user) }
                let statement = try connection.statement(Self.saveStatement(stored))
                statement.bind(1, user.name)
                statement.bind(2, user.email)
                statement.bind(3, user.avatarURL)
                statement.bind(4, stored.newNameKey)
                // Folding costs (case, width, Unicode forms): only for a key the UPDATE writes.
                if stored.emailChanged { statement.bind(5, UserKey.fold(user.email)) }
                statement.bind(6, user.id)
                statement.bind(7, user.version)
                try Self.refusingDuplicateEmail(user, connection, "saving a user") { () throws(SQLiteError) in
                    try statement.run("saving a user")
                }
                if connection.changes == 1 {
                    try SQLiteHistory.recordSave(user, before: stored.user, author, connection)
                    var saved = user
                    saved.version += 1
                    return .done(saved, seq: try Self.loggedSeq(connection, "saving a user"))
                }
                return try Self.stored(id: user.id, connection).map(Outcome.conflict) ?? .notFound
            }
        } committed: { outcome in
            guard case .done(let saved, let seq) = outcome else { return nil }
            return .change(.saved(saved), seq: seq)
        }
        switch outcome {
        case .done(let saved, _), .unchanged(let saved): return saved
        case .conflict(let stored): throw .conflict(stored: stored)
        case .notFound: throw .notFound(id: user.id)
        }
    }

    /// A user whose id is already stored is refused as `.conflict(stored:)`: someone else
    /// created that user first, and the person sees what is stored under that id.
    /// An id removed before comes back with the version after its last one (`lastVersion`), so
    /// a screen still holding the removed user's version can never pass the version check of
    /// the new one by accident.
    public func add(_ new: NewUser, by author: ChangeAuthor) async throws(UserError) -> User {
        let outcome = try await guardedWrite { connection throws(SQLiteError) -> Outcome in
            try connection.writeTransaction("adding a user") { () throws(SQLiteError) -> Outcome in
                let version = try Self.lastVersion(of: new.id, connection) + 1
                let user = User(id: new.id, name: new.name, email: new.email, avatarURL: new.avatarURL,
                                version: version)
                let statement = try connection.statement("""
                    INSERT INTO users (id, name, email, avatar_url, version, name_key, email_key)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO NOTHING
                    """)
                Self.bindRow(statement, user)
                try Self.refusingDuplicateEmail(user, connection, "adding a user") { () throws(SQLiteError) in
                    try statement.run("adding a user")
                }
                if connection.changes == 1 {
                    try SQLiteHistory.recordAdd(user, author, connection)
                    return .done(user, seq: try Self.loggedSeq(connection, "adding a user"))
                }
                return try Self.stored(id: user.id, connection).map(Outcome.conflict) ?? .notFound
            }
        } committed: { outcome in
            guard case .done(let added, let seq) = outcome else { return nil }
            return .change(.added(added), seq: seq)
        }
        switch outcome {
        case .done(let saved, _), .unchanged(let saved): return saved
        case .conflict(let stored): throw .conflict(stored: stored)
        case .notFound: throw .unavailable(reason: "\(path): the new user was neither added nor found")
        }
    }

    /// The newest version `id` had, as the history remembers it (0 for an id never stored).
    static func lastVersion(of id: UUID, _ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        let statement = try connection.statement("""
            SELECT max(coalesce((SELECT max(version_after) FROM history WHERE user_id = ?1), 0),
                       coalesce((SELECT max(version_after) FROM history_parts WHERE user_id = ?1), 0))
            """)
        defer { statement.reset() }
        statement.bind(1, id)
        guard try statement.step("reading a removed user's last version") else { return 0 }
        return statement.int(0)
    }

    public func remove(id: UUID, by author: ChangeAuthor) async throws(UserError) {
        let removedAs = try await guardedWrite { connection throws(SQLiteError) -> Int? in
            try connection.writeTransaction("removing a user") { () throws(SQLiteError) -> Int? in
                try SQLiteHistory.recordRemove(id, author, connection)
                let statement = try connection.statement("DELETE FROM users WHERE id = ?1")
                statement.bind(1, id)
                try statement.run("removing a user")
                return connection.changes == 1 ? try Self.loggedSeq(connection, "removing a user") : nil
            }
        } committed: { seq in
            seq.map { .change(.removed(id: id), seq: $0) }
        }
        if removedAs == nil { throw .notFound(id: id) }
    }
}
