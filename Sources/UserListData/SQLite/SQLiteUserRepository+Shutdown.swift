import CSQLite
import Glibc
import UserListDomain

extension SQLiteUserRepository {
    static let shutdownCheckpointAttempts = 5

    /// Ends a clean stop: on the writer, after any write queued before it, every page the WAL
    /// holds is copied into the database file and the WAL is truncated to nothing. It is the
    /// writer's last job: a write asked for after it fails (the store is closed).
    ///
    /// Why: without it a clean stop left megabytes of committed pages in `-wal` beside the file,
    /// so a copy of the database file alone (a backup, a move) missed the newest commits. Returns
    /// the WAL pages that could not be copied (0 when the WAL is empty; a reader holding an old
    /// snapshot can leave some, which the next open copies).
    @discardableResult
    public func checkpointForShutdown() throws(UserError) -> Int {
        guard let writer else { return 0 }  // a read-only repository writes no WAL
        do {
            return try writer.performLast { [checkpointer] connection throws(SQLiteError) -> Int in
                // The background checkpointer's pass, if one runs, would make this one BUSY.
                checkpointer?.finishPending()
                var logged: Int32 = 0, copied: Int32 = 0
                var code = SQLITE_BUSY
                // A reader of another process (or one finishing here) can still hold the WAL for a
                // moment after the busy handler's wait: a few more tries, then the next open copies it.
                for attempt in 0..<Self.shutdownCheckpointAttempts {
                    if attempt > 0 { usleep(20_000) }
                    code = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_TRUNCATE, &logged,
                                                     &copied)
                    if code != SQLITE_BUSY { break }
                }
                guard code == SQLITE_OK || code == SQLITE_BUSY else {
                    throw connection.error(code, "checkpointing the WAL at shutdown")
                }
                return code == SQLITE_OK ? 0 : max(1, Int(logged - copied))
            }
        } catch {
            throw error.userError
        }
    }
}
