import UserListDomain
import ThreadLocks

/// The next page of each export in progress, read while the daemon encodes and sends the page
/// before it: `export_page` asks for pages one at a time, so without this the server sat idle
/// while the daemon and the client worked, and they waited while it read. With it, a page's read
/// overlaps the previous page's encoding and the client's writing.
///
/// Keyed by everything the read depends on (the cursor, limit, search and budget), so a request
/// that does not continue an export where a read-ahead stands simply reads. At most
/// `capacity` pages wait (an export abandoned by its client leaves one until it is pushed out).
/// A page read ahead is at most one page's time older than a read on request would be: an export
/// is not a snapshot anyway (PROTOCOL.md).
final class ExportReadAhead: Sendable {
    struct Key: Hashable, Sendable {
        var after: PageCursor
        var limit: Int
        var search: String?
        var byteBudget: Int
    }

    typealias Read = Task<Result<UserPage, UserError>, Never>

    static let capacity = 4
    private let pending = Lock<[Key: Read]>([:])

    /// The read started for `key`, if any (taken: a key is read ahead once).
    func take(_ key: Key) -> Read? {
        pending.withLock { $0.removeValue(forKey: key) }
    }

    /// Starts `read` for `key`, pushing out another waiting page when `capacity` are waiting.
    func start(_ key: Key, _ read: @escaping @Sendable () async -> Result<UserPage, UserError>) {
        let task = Read { await read() }
        let dropped = pending.withLock { pending -> [Read] in
            var dropped: [Read] = []
            if pending.count >= Self.capacity, let any = pending.keys.first,
               let old = pending.removeValue(forKey: any) {
                dropped.append(old)
            }
            pending[key] = task
            return dropped
        }
        for task in dropped { task.cancel() }
    }
}
