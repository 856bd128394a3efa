import CSQLite
import Synchronization
import ThreadLocks

/// The store's one read-write connection and the thread that owns it.
///
/// Writes run on a thread of their own rather than on the caller's because they block: on
/// `fsync` (synchronous=FULL) and, while another process holds the write lock, for up to the
/// busy timeout. Blocking a Swift-concurrency thread for that long would starve the daemon's
/// sessions (the cooperative pool has one thread per core: two here). One thread, not a serial
/// Dispatch queue, so the connection's page cache stays in one malloc arena (`JobThread`).
final class SQLiteWriter: Sendable {
    /// What only the writer's thread touches.
    private struct Owned {
        let connection: SQLiteConnection
        /// Set by `performLast`: a job queued after it fails (`SQLiteError.closed`) instead of writing.
        var closed = false
    }

    private let owned: Confined<Owned>
    private let thread: JobThread
    /// The connection's WAL hook points at it without retaining it: kept as long as the
    /// connection, so a job still running after the repository let go cannot call a freed one.
    private let checkpointer: SQLiteCheckpointer?
    /// Jobs queued and not started: a bulk write running on the queue goes on in its
    /// transaction while this is 0, and commits to let them in when it is not.
    private let queued = Atomic<Int>(0)

    /// Whether another job waits for the queue (read from the job running on it).
    var othersWaiting: Bool { queued.load(ordering: .relaxed) > 0 }

    /// `name`: the thread's, as `top -H` and perf show it (at most 15 bytes).
    init(connection: SQLiteConnection, name: String, checkpointer: SQLiteCheckpointer?) {
        self.thread = JobThread(name: name)
        self.owned = Confined(Owned(connection: connection), to: .thread(thread))
        self.checkpointer = checkpointer
    }

    /// The thread ends after the jobs queued before the writer was let go.
    deinit { thread.finish() }

    /// Runs `body` on the writer's thread and returns its result to the awaiting task.
    func perform<T: Sendable>(
        _ body: @escaping @Sendable (SQLiteConnection) throws(SQLiteError) -> T
    ) async throws(SQLiteError) -> T {
        let result: Result<T, SQLiteError> = await withCheckedContinuation { continuation in
            queued.add(1, ordering: .relaxed)
            thread.async {
                self.queued.subtract(1, ordering: .relaxed)
                continuation.resume(returning: self.run(body))
            }
        }
        return try result.get()
    }

    /// Runs `body` on the writer's thread and waits for it: for set-up and for tools, never from
    /// an async context on the hot path.
    func performAndWait<T>(_ body: (SQLiteConnection) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        queued.add(1, ordering: .relaxed)  // the shutdown's checkpoint, too, lets an import's step commit
        let result: Result<T, SQLiteError> = thread.sync {
            queued.subtract(1, ordering: .relaxed)
            return run(body)
        }
        return try result.get()
    }

    /// Runs `body` as the writer's last job (a clean stop's checkpoint): every job after it
    /// fails. A background step still going (the search index catching up, a slice of an
    /// import, a late save) would otherwise write into the WAL the checkpoint just emptied; the
    /// next open finishes the import and the catch-up from their marks.
    func performLast<T>(_ body: (SQLiteConnection) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try performAndWait { connection throws(SQLiteError) -> T in
            defer { owned.withValue { $0.closed = true } }
            return try body(connection)
        }
    }

    /// On the writer's thread.
    private func run<T>(_ body: (SQLiteConnection) throws(SQLiteError) -> T) -> Result<T, SQLiteError> {
        // Taken out, not used in place: `performLast`'s body marks the writer closed.
        let (connection, closed) = owned.withValue { ($0.connection, $0.closed) }
        guard !closed else { return .failure(.closed(path: connection.path)) }
        return Result { () throws(SQLiteError) -> T in try body(connection) }
    }
}

extension SQLiteError {
    /// A write asked for after the store's last job (the daemon is stopping).
    static func closed(path: String) -> SQLiteError {
        SQLiteError(code: SQLITE_MISUSE, detail: "the store is closed: the daemon is stopping", path: path,
                    operation: "writing")
    }
}
