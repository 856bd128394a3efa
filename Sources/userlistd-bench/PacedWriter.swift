import Glibc
import Synchronization
import UserListWire

/// The writer of the sustained and restart sections, on a thread of its own: `renames` renames of
/// the user its session has open, on a fixed schedule (rename k due `k × interval` after `start`),
/// each a set_draft_name to "<prefix><k>" then a save; it records when each save was sent.
final class PacedWriter: Sendable {
    let start: UInt64
    let interval: UInt64
    let renames: Int
    private let sentAt: Mutex<[UInt64]>
    private let done = Atomic<Bool>(false)
    private let failure = Mutex<String?>(nil)
    private let sentCount = Atomic<Int>(0)

    /// The schedule starts now.
    init(renames: Int, interval: UInt64) {
        self.renames = renames
        self.interval = interval
        sentAt = Mutex([UInt64](repeating: 0, count: renames))
        start = monotonicNanos()
    }

    /// Runs the renames on `box`'s connection; `beforeRename(k)` runs on the thread when rename k
    /// is due, before it is sent.
    func run(_ box: SustainedBench.WriterBox, name: String, prefix: String,
             beforeRename: @escaping @Sendable (Int) -> Void = { _ in }) -> BenchThread {
        BenchThread(name: name) { [self] in
            defer { done.store(true, ordering: .releasing) }
            let client = box.connection
            do throws(BenchError) {
                for k in 0..<renames {
                    let tick = start + UInt64(k) * interval
                    let now = monotonicNanos()
                    if tick > now { usleep(UInt32((tick - now) / 1000)) }
                    beforeRename(k)
                    try client.awaitReply(client.intent("detail", "set_draft_name",
                                                        ["name": .string("\(prefix)\(k)")]).id, seconds: 30)
                    sentAt.withLock { $0[k] = monotonicNanos() }
                    try client.awaitReply(client.intent("detail", "save").id, seconds: 30)
                    sentCount.add(1, ordering: .relaxed)
                }
            } catch {
                failure.withLock { $0 = "writer: \(error)" }
            }
        }
    }

    /// When rename k's save was sent (0: not yet).
    func sent(_ k: Int) -> UInt64 { sentAt.withLock { $0[k] } }
    var sends: [UInt64] { sentAt.withLock { $0 } }
    var finished: Bool { done.load(ordering: .acquiring) }
    var completed: Int { sentCount.load(ordering: .relaxed) }
    var failureMessage: String? { failure.withLock { $0 } }

    /// Pumps `set` until two seconds after the writer finished, or `seconds` at most.
    func readUntilFinished(_ set: ConnectionSet, seconds: Double,
                           _ onFrame: (_ index: Int, _ frame: [UInt8], _ at: UInt64) -> Void) {
        var graceUntil: UInt64 = .max
        let hardStop = deadline(seconds: seconds)
        while monotonicNanos() < min(graceUntil, hardStop) {
            set.pump(timeoutMillis: 50, onFrame)
            if graceUntil == .max && finished { graceUntil = deadline(seconds: 2) }
        }
    }
}
