import CSQLite
import Dispatch
import Synchronization
import ThreadLocks

/// Copies the WAL back into the database file on a thread of its own, so that a commit never
/// waits for a checkpoint.
///
/// SQLite's default runs a checkpoint inside the commit that takes the WAL past 1,000 pages:
/// that commit then writes those pages to the database file and fsyncs it too, on the writer's
/// thread, and every write queued behind it waits (a save's p99; an import's chunks paid it
/// every other chunk). Here the writer's connection reports each commit's WAL size
/// (`sqlite3_wal_hook`, which also turns the automatic checkpoint off) and past
/// `backgroundFrames` this checkpointer runs a PASSIVE checkpoint on a connection of its own,
/// which neither blocks nor waits for readers or the writer.
///
/// The WAL starts over only when a checkpoint has copied all of it before the next write
/// begins, which a steady stream of writes may never allow. Bulk writers (an import) therefore
/// wait for room first (`makeRoom`): past `bulkFrames` they let the checkpoint finish before
/// their next transaction, off the writer's thread, so the saves of other clients are not held
/// up behind a checkpoint. Any writer past `inlineFrames` (a stream of writes from another
/// process, say) checkpoints right after its commit, as SQLite would have: the WAL stays bounded.
final class SQLiteCheckpointer: Sendable {
    private let path: String
    private let queue: DispatchQueue
    /// Its own connection, opened by the first checkpoint: the queue's alone.
    private let connection: Confined<SQLiteConnection?>
    private let pending = Atomic<Bool>(false)
    /// Frames in the WAL after the last commit of the observed writer.
    private let walFrames = Atomic<Int>(0)

    static let backgroundFrames = 1_000
    static let bulkFrames = 8_000
    static let inlineFrames = 65_536

    init(path: String) {
        self.path = path
        queue = DispatchQueue(label: "userlistd.sqlite.checkpoint")
        connection = Confined(nil, to: .queue(queue))
    }

    /// Installs the hook on the writer's connection. The writer must not outlive `self` (the
    /// repository holds both).
    func attach(to writer: SQLiteConnection) {
        sqlite3_wal_hook(writer.handle, { context, db, name, frames in
            guard let context else { return SQLITE_OK }
            let checkpointer = Unmanaged<SQLiteCheckpointer>.fromOpaque(context).takeUnretainedValue()
            checkpointer.walFrames.store(Int(frames), ordering: .relaxed)
            if frames >= SQLiteCheckpointer.inlineFrames {
                _ = sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            } else if frames >= SQLiteCheckpointer.backgroundFrames {
                checkpointer.checkpointSoon()
            }
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Queues one checkpoint unless one is queued already.
    private func checkpointSoon() {
        guard pending.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return
        }
        queue.async { [self] in
            pending.store(false, ordering: .releasing)
            _ = checkpoint()
        }
    }

    /// One checkpoint on the queue; true when it copied the whole WAL. Busy (another checkpoint
    /// is running) or failed (e.g. a full disk): the WAL keeps the pages, and the next commit past
    /// the threshold asks again.
    ///
    /// `restart`: after a PASSIVE pass, a RESTART one, which waits (up to `restartWait`) for the
    /// writer and for readers of the WAL to finish, so that the next write starts the WAL over.
    /// After a PASSIVE pass alone that is left to chance: the next write starts over only if no
    /// connection is reading the WAL at that moment. (Measured with the bulk bench at 100,000
    /// users: RESTART 13.2k users/s and a save p99 of 26 ms, TRUNCATE 11.6k/s and 36 ms.)
    private func checkpoint(restart: Bool = false) -> Bool {
        guard let connection = connection.withValue({ connection in
            if connection == nil,
               let opened = try? SQLiteConnection(path: path, mode: .readWrite,
                                                  busyTimeoutMilliseconds: Self.restartWait) {
                // A connection that has read nothing has not opened the WAL yet, and a checkpoint on
                // it does nothing and says so only by logging -1 frames.
                if (try? opened.integer("PRAGMA user_version", "opening the checkpointer")) != nil {
                    connection = opened
                }
            }
            return connection
        }) else { return false }
        var logged: Int32 = 0, copied: Int32 = 0
        var code = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logged, &copied)
        if restart && code == SQLITE_OK {
            code = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_RESTART, &logged, &copied)
        }
        return code == SQLITE_OK && logged >= 0 && copied >= logged
    }

    /// Waits for a checkpoint queued or running to end. SQLite runs one checkpoint at a time and
    /// answers another with SQLITE_BUSY at once (no busy handler for that lock): the shutdown's
    /// own checkpoint calls this first, from the writer's queue, where no commit can queue more.
    func finishPending() {
        queue.sync {}
    }

    /// How long a RESTART checkpoint waits for the writer and the readers (milliseconds): about one
    /// import chunk, so it does not give up behind the chunk it follows.
    static let restartWait = 200

    /// For a bulk writer, before its next transaction: when the WAL is past `bulkFrames`, waits
    /// (without holding the writer) until a checkpoint has copied all of it, so that the next
    /// write starts the WAL over. Gives up after about `patience`: a reader holding an old
    /// snapshot can keep the WAL from being copied, and the import must go on regardless.
    func makeRoom(patience: Duration = .seconds(2)) async {
        guard walFrames.load(ordering: .relaxed) >= Self.bulkFrames else { return }
        let until = ContinuousClock.now + patience
        while ContinuousClock.now < until {
            let complete = await withCheckedContinuation { continuation in
                queue.async { [self] in continuation.resume(returning: checkpoint(restart: true)) }
            }
            if complete { return }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}
