import Foundation
import ThreadLocks
import UserListDomain

/// What is left of an import once its merge has committed (or refused it): its staged rows,
/// and for a large one the planner's statistics. Neither changes what anyone reads, so both run
/// after the reply, on the merge's own connection (`PGPool.perform(_:after:)`), instead of
/// inside the merge's transaction where the client waited for them (0.3 s at 100,000 users,
/// 1.2 s at a million).
///
/// The merge deletes the import's `imports` row in its own transaction (`forget`): from then on
/// its staged rows belong to no import, and nothing reads them. A daemon that dies before the
/// clean-up leaves them behind; whichever daemon opens the database next drops them (`sweep`).
/// Such rows cannot belong to a live import: `beginImport` commits the `imports` row before any
/// entry is staged, and a chunk is staged in a transaction that updates that row, rolled back if
/// the import is gone.
///
/// Not deferred, though tried: the trigram (GIN) keys. A merge with a large
/// `gin_pending_list_limit` appends them to the indexes' pending lists, to be merged in bulk
/// after the reply; but any other client's save that inserts into an index while the list is
/// past its own (default) limit merges the whole list itself, seconds inside that save.
enum PostgresImportCleanup {
    static let operation = "cleaning up an import"

    /// Deletes import `id`'s `imports` row (in the caller's transaction).
    static func forget(_ id: Int, _ connection: PGConnection) throws(PGError) {
        try connection.query("DELETE FROM imports WHERE id = $1", [String(id)], operation)
    }

    /// Deletes import `id`'s staged rows, then refreshes the planner's statistics when the
    /// merge read `entries` ≥ `PostgresUserRepository.analyzeAfter` (its estimates now, not at
    /// autovacuum's leisure).
    static func run(_ id: Int, entries: Int, _ connection: PGConnection) throws(PGError) {
        try connection.query("DELETE FROM import_staged WHERE import_id = $1", [String(id)], operation)
        if entries >= PostgresUserRepository.analyzeAfter { try connection.execute("ANALYZE users", operation) }
    }

    /// At open: drops the staged rows of imports that are gone (a daemon died between a merge's
    /// commit and its clean-up; cheap when there are none).
    static func sweep(_ connection: PGConnection) throws(PGError) {
        try connection.execute("""
            DELETE FROM import_staged s WHERE NOT EXISTS (SELECT 1 FROM imports i WHERE i.id = s.import_id)
            """, operation)
    }
}

extension PostgresUserRepository {
    /// Waits until the clean-up of every import merged here so far has ended (tests, tools).
    package func importCleanupFinished() async {
        await pool.drain()
    }
}
