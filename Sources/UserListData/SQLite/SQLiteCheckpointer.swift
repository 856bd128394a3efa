import CSQLite
import Dispatch
import Synchronization

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
/// begins, which a steady stream of writes (an import) may never allow. Past `inlineFrames`
/// the writer therefore checkpoints itself, right after its commit, as SQLite would have: the
/// WAL stays bounded, at the old cost but sixteen times less often.
final class SQLiteCheckpointer: @unchecked Sendable {
    // Invariant that makes it Sendable: `connection` is touched only on `queue`.
    private let path: String
    private let queue = DispatchQueue(label: "userlistd.sqlite.checkpoint")
    private var connection: SQLiteConnection?
    private let pending = Atomic<Bool>(false)

    static let backgroundFrames: Int32 = 1_000
    static let inlineFrames: Int32 = 16_000

    init(path: String) {
        self.path = path
    }

    /// Installs the hook on the writer's connection. The writer must not outlive `self` (the
    /// repository holds both).
    func attach(to writer: SQLiteConnection) {
        sqlite3_wal_hook(writer.handle, { context, db, name, frames in
            guard let context else { return SQLITE_OK }
            let checkpointer = Unmanaged<SQLiteCheckpointer>.fromOpaque(context).takeUnretainedValue()
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
        guard pending.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        queue.async { [self] in
            pending.store(false, ordering: .releasing)
            if connection == nil {
                connection = try? SQLiteConnection(path: path, mode: .readWrite, busyTimeoutMilliseconds: 0)
            }
            guard let connection else { return }
            // Busy (another checkpoint is running) or failed (e.g. a full disk): the WAL keeps
            // the pages, and the next commit past the threshold asks again.
            _ = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        }
    }
}
