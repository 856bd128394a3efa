import Dispatch
import Synchronization
import ThreadLocks

/// A few `PGConnection`s, each owned by its own serial Dispatch queue, so libpq's blocking calls
/// never run on a Swift-concurrency pool thread (two threads here: blocking one on the network
/// would stall every session). A job goes to the worker with the fewest jobs waiting.
final class PGPool: Sendable {
    private let workers: [Worker]
    let server: String

    private final class Worker: Sendable {
        let queue: DispatchQueue
        /// Its PGconn: the queue's alone.
        private let owned: Confined<PGConnection>
        let pending = Atomic<Int>(0)

        init(index: Int, conninfo: String, server: String) {
            queue = DispatchQueue(label: "userlistd.postgres.\(index)")
            owned = Confined(PGConnection(conninfo: conninfo, server: server), to: .queue(queue))
        }

        /// The connection, on the queue only.
        var connection: PGConnection { owned.value }
    }

    init(conninfo: String, server: String, size: Int) {
        self.server = server
        workers = (0..<max(1, size)).map { Worker(index: $0, conninfo: conninfo, server: server) }
    }

    /// Runs `body` on a worker's queue with its connection and returns the result to the
    /// awaiting task.
    func perform<T: Sendable>(
        _ body: @escaping @Sendable (PGConnection) throws(PGError) -> T
    ) async throws(PGError) -> T {
        let worker = workers.min { $0.pending.load(ordering: .relaxed) < $1.pending.load(ordering: .relaxed) }!
        worker.pending.add(1, ordering: .relaxed)
        let result: Result<T, PGError> = await withCheckedContinuation { continuation in
            worker.queue.async {
                let result = Result { () throws(PGError) -> T in try body(worker.connection) }
                worker.pending.subtract(1, ordering: .relaxed)
                continuation.resume(returning: result)
            }
        }
        return try result.get()
    }

    /// As `perform`, then `after` on the same connection as soon as the result is on its way to
    /// the awaiting task: work nobody waits for (an import's clean-up), started before any other
    /// job can reach the connection. Other jobs go to the other workers meanwhile, if they can.
    func perform<T: Sendable>(_ body: @escaping @Sendable (PGConnection) throws(PGError) -> T,
                              after: @escaping @Sendable (PGConnection, T) -> Void) async throws(PGError) -> T {
        let worker = workers.min { $0.pending.load(ordering: .relaxed) < $1.pending.load(ordering: .relaxed) }!
        worker.pending.add(1, ordering: .relaxed)
        let result: Result<T, PGError> = await withCheckedContinuation { continuation in
            worker.queue.async {
                let result = Result { () throws(PGError) -> T in try body(worker.connection) }
                // Counted as many jobs while `after` runs: a job only goes behind it when every
                // other worker is busy with one too (a save waiting for an import's clean-up).
                worker.pending.add(Self.afterWeight, ordering: .relaxed)
                continuation.resume(returning: result)
                if case .success(let value) = result { after(worker.connection, value) }
                worker.pending.subtract(1 + Self.afterWeight, ordering: .relaxed)
            }
        }
        return try result.get()
    }

    /// How many jobs a worker running `after` work counts as.
    static let afterWeight = 1_000

    /// Returns once every job queued so far, on every worker, has ended (`after` included).
    func drain() async {
        for worker in workers {
            await withCheckedContinuation { continuation in worker.queue.async { continuation.resume() } }
        }
    }

    /// Runs `body` on the first worker and waits: for opening and tools, never from a session.
    func performAndWait<T>(_ body: (PGConnection) throws(PGError) -> T) throws(PGError) -> T {
        let worker = workers[0]
        let result: Result<T, PGError> = worker.queue.sync {
            Result { () throws(PGError) -> T in try body(worker.connection) }
        }
        return try result.get()
    }

    /// Closes every connection once its queued jobs are done. Never waits: the last
    /// reference may be dropped on a worker's own queue.
    func close() {
        for worker in workers { worker.queue.async { worker.connection.disconnect() } }
    }
}
