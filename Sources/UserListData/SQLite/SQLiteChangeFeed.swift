import CSQLite
import Foundation
import UserListDomain
import ThreadLocks

/// Every committed change to a SQLite store, from any writer, delivered to each observer once
/// and in commit order.
///
/// How it knows: triggers append each change (with a snapshot of the row) to the `changes`
/// table inside the writer's own transaction (schema v3), so a change exists in the log if and
/// only if it committed, and `seq` is the commit order (SQLite has one writer at a time).
/// - An observed `SQLiteUserRepository` hands each commit's change and `seq` to the feed on its
///   writer thread, right after the commit: delivered from there as it is, never read back.
/// - Other connections' commits (another process, or a repository the feed does not observe)
///   are found by `StoreWriteWatcher`: inotify sees the write, `PRAGMA data_version` confirms
///   the commit, and the feed reads the log rows after the last `seq` it delivered. A slow
///   safety-net check every `safetyInterval` covers filesystems without inotify. While the
///   observed repository holds the write lock, and until it has handed its commit over, the
///   watcher stands aside and reads no log (those writes are its own, and only the writer knows
///   whose receipt they go in).
///
/// Either path takes the changes in `seq` order under one lock (`reader`); they are handed to
/// the handlers after it, in that order (`OrderedHandOff`), so a change is never delivered twice
/// or out of order, whichever path sees it first, and no handler runs under a lock of the feed.
///
/// Imports log one row per user (`added` or `saved`; rows an import leaves identical log
/// nothing), so observers learn exactly which users changed. An import's rows carry no
/// snapshot: those changes arrive with the user's state when the feed reads them. A
/// million-user import therefore yields a million calls, a batch at a time; an observer that
/// queues them must queue without bound, because dropping a change would break the guarantee.
///
/// The log is pruned by the writers to the last 10,000 rows, never touching rows younger than a
/// minute: a feed (in any process) that falls more than a minute behind may miss changes; it
/// then delivers `.resync` in their place (it sees the hole in `seq`).
public final class SQLiteChangeFeed: UserChangeFeed, Sendable {
    private struct Reader {
        let connection: SQLiteConnection
        var lastSeq: Int
        var lastDataVersion: Int
        /// The observed repository holds the write lock, or has committed and not yet handed
        /// the commit over (`committed`): the log may hold a row of its own that only the
        /// writer may deliver, once its receipt has it (the write's session tells its own
        /// changes by that receipt). The watcher reads nothing meanwhile.
        var ownWriteOpen = false
    }

    private struct Observer {
        let handler: @Sendable (CommittedChange) -> Void
        /// The last `seq` committed before it began observing: it sees only later changes.
        let after: Int
    }

    /// The read connection and how far it has read; the writer's and the watcher's threads take
    /// changes under it, in `seq` order, into `outbox`.
    private let reader: Lock<Reader>
    /// Changes taken under `reader`, on their way to the handlers (no lock held while they run).
    private let handOff: OrderedHandOff<(change: UserChange, seq: Int)>
    /// Taken alone and briefly, never while a handler runs under it: a handler may be mid-call
    /// when its observation is cancelled from another thread.
    private let observers: Lock<(byID: [Int: Observer], nextID: Int)>
    private let watcher = Lock<StoreWriteWatcher?>(nil)

    static let batchSize = 1_000

    /// Watches the store at `path`, written by anyone. `safetyInterval` is the check that runs
    /// even when inotify reports nothing (the only check where inotify is unavailable).
    public init(path: String, safetyInterval: Duration = .seconds(1)) throws(UserError) {
        let observers = Lock<(byID: [Int: Observer], nextID: Int)>(([:], 0))
        self.observers = observers
        handOff = OrderedHandOff { batch in
            let current = observers.withLock { Array($0.byID.values) }
            for (change, seq) in batch {
                let committed = CommittedChange(change, seq: seq)
                for observer in current where seq > observer.after { observer.handler(committed) }
            }
        }
        do {
            let connection = try SQLiteConnection(path: path, mode: .readOnly, busyTimeoutMilliseconds: 5_000)
            try SQLiteSchema.check(connection)
            let version = try connection.integer("PRAGMA data_version", "watching for changes")
            let seq = try Self.maxSeq(connection)
            reader = Lock(Reader(connection: connection, lastSeq: seq, lastDataVersion: version))
        } catch {
            throw error.userError
        }
        let watcher = StoreWriteWatcher(path: path, safetyInterval: safetyInterval) { [weak self] in
            self?.checkForOtherCommits()
        }
        self.watcher.withLock { $0 = watcher }
    }

    /// Watches `repository`'s file and takes its commits straight from its writer.
    public convenience init(observing repository: SQLiteUserRepository,
                            safetyInterval: Duration = .seconds(1)) throws(UserError) {
        try self.init(path: repository.path, safetyInterval: safetyInterval)
        repository.onCommit { [weak self] notice in self?.committed(notice) }
        // Its writes while it holds the lock are its own: the watcher need not look for them.
        repository.onWriteLock { [weak self] held in
            guard let self else { return }
            reader.withLock { $0.ownWriteOpen = held }
            watcher.withLock { watcher in held ? watcher?.ownWriteBegan() : watcher?.ownWriteEnded() }
        }
    }

    deinit {
        watcher.withLock { $0?.stop() }
    }

    /// Whether inotify watches the file (otherwise only the safety-net check finds other writers).
    public var watchesFile: Bool { watcher.withLock { $0?.isWatching ?? false } }

    public func observe(_ handler: @escaping @Sendable (CommittedChange) -> Void) -> ChangeObservation {
        // What is committed now is "before": start after the newest row, even if it is not
        // delivered yet.
        let after = reader.withLock { reader in
            max(reader.lastSeq, (try? Self.maxSeq(reader.connection)) ?? reader.lastSeq)
        }
        let id = observers.withLock { observers in
            let id = observers.nextID
            observers.nextID += 1
            observers.byID[id] = Observer(handler: handler, after: after)
            return id
        }
        return ChangeObservation { [weak self] in
            _ = self?.observers.withLock { $0.byID.removeValue(forKey: id) }
        }
    }

    // MARK: delivering

    /// The observed repository committed: on its writer thread, before its next write.
    private func committed(_ notice: SQLiteUserRepository.CommitNotice) {
        let mustReadLog = reader.withLock { reader -> Bool in
            switch notice {
            case .change(let change, let seq) where seq == reader.lastSeq + 1:
                reader.lastSeq = seq
                take(change, seq: seq)
            case .change(_, let seq) where seq <= reader.lastSeq:
                break  // the watcher read it from the log first
            case .changes(let changes) where changes.first?.seq == reader.lastSeq + 1:
                for (change, seq) in changes { take(change, seq: seq) }
                reader.lastSeq = changes.last?.seq ?? reader.lastSeq
            case .changes(let changes) where (changes.last?.seq ?? 0) <= reader.lastSeq:
                break
            case .change, .changes, .readTheLog:
                return true  // another writer's rows came between, or a big import
            }
            return false
        }
        deliverTaken()
        if mustReadLog { readLog(byWriter: true) }
    }

    /// On the watcher's thread (and from tests): reads the log if another connection committed.
    func checkForOtherCommits() {
        let committed = reader.withLock { reader -> Bool in
            // Left for a later check (the version is not taken): the writer reads what it must.
            guard !reader.ownWriteOpen else { return false }
            guard let version = try? reader.connection.integer("PRAGMA data_version", "watching for changes"),
                  version != reader.lastDataVersion else { return false }
            reader.lastDataVersion = version
            return true
        }
        if committed { readLog(byWriter: false) }
    }

    /// Queues a change for the handlers; under `reader`, in `seq` order.
    private func take(_ change: UserChange, seq: Int) {
        handOff.take((change, seq))
    }

    private func deliverTaken() { handOff.handOut() }

    /// Reads the log past what was read, a batch at a time: each batch is taken under `reader`
    /// and handed out after it, so a big backlog is never held in memory whole.
    /// `byWriter`: the observed repository's writer, handing over its commit; anyone else stops
    /// while an own write is open.
    private func readLog(byWriter: Bool) {
        while reader.withLock({ readLogBatch(&$0, byWriter: byWriter) }) { deliverTaken() }
        deliverTaken()
    }

    /// Takes one batch of log rows; returns whether there may be more.
    private func readLogBatch(_ reader: inout Reader, byWriter: Bool) -> Bool {
        if reader.ownWriteOpen && !byWriter { return false }
        do {
            let hasObservers = observers.withLock { !$0.byID.isEmpty }
            guard hasObservers else {
                reader.lastSeq = try Self.maxSeq(reader.connection)
                return false
            }
            // Trigger rows carry a snapshot (version is set); import rows do not, so the
            // user's current row stands in (a later change row follows if it changed again).
            let statement = try reader.connection.statement("""
                SELECT c.seq, c.kind, c.user_id,
                       COALESCE(c.name, u.name), COALESCE(c.email, u.email),
                       CASE WHEN c.version IS NULL THEN u.avatar_url ELSE c.avatar_url END,
                       COALESCE(c.version, u.version)
                FROM changes c LEFT JOIN users u ON c.version IS NULL AND u.id = c.user_id
                WHERE c.seq > ?1 ORDER BY c.seq LIMIT ?2
                """)
            defer { statement.reset() }
            statement.bind(1, reader.lastSeq)
            statement.bind(2, Self.batchSize)
            var read = 0
            while try statement.step("reading the change log") {
                read += 1
                let seq = statement.int(0)
                if seq > reader.lastSeq + 1 {
                    // `seq` has no gaps (AUTOINCREMENT, one writer): the rows between were
                    // pruned before this feed read them. Say so rather than skip them silently.
                    take(.resync, seq: seq - 1)
                }
                reader.lastSeq = seq
                guard let change = Self.change(from: statement) else { continue }
                take(change, seq: seq)
            }
            return read == Self.batchSize
        } catch {
            // The file is unreadable right now (e.g. removed, I/O error): the next check tries
            // again. Nothing is lost; `lastSeq` only advances past rows that were taken.
            return false
        }
    }

    private static func change(from row: SQLiteStatement) -> UserChange? {
        let kind = row.text(1)
        if kind == "reloaded" { return .resync }  // a bulk load into an empty store (schema v7)
        guard let id = row.uuid(2) else { return nil }
        if kind == "removed" { return .removed(id: id) }
        guard !row.isNull(6) else { return nil }  // imported, then removed: the removal follows
        let user = User(id: id, name: row.text(3), email: row.text(4), avatarURL: row.optionalText(5),
                        version: row.int(6))
        return kind == "added" ? .added(user) : .saved(user)
    }

    private static func maxSeq(_ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        try connection.integer("SELECT COALESCE(MAX(seq), 0) FROM changes", "reading the change log")
    }
}
