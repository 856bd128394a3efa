import CLibPQ

/// Asks the server to cancel the statement a connection is running, from any thread: libpq's
/// `PGcancel` is made for that (the connection itself stays confined to its own thread). Used
/// to stop an import's merge as soon as a check run beside it has refused the import.
final class PGCanceller: @unchecked Sendable {  // Invariant: `handle` is only passed to PQcancel, which is thread-safe, and freed once.
    private let handle: OpaquePointer?

    /// A canceller for `connection`'s current backend (none when it is not connected).
    init(_ connection: PGConnection) {
        handle = connection.conn.flatMap { PQgetCancel($0) }
    }

    deinit { if let handle { PQfreeCancel(handle) } }

    /// Sends the cancel request; a statement that already ended is not affected.
    func cancel() {
        guard let handle else { return }
        var message = [CChar](repeating: 0, count: 256)
        _ = PQcancel(handle, &message, Int32(message.count))
    }
}
