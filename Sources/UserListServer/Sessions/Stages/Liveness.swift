import Synchronization

/// Whether a client is still there, and whether its unfinished frame is within its deadline.
///
/// The read path reports what it hears; the daemon's sweep (another thread, every few seconds)
/// asks what to do. Atomics rather than loop-owned state because those two are different threads
/// and the sweep must not queue a job on every loop to ask.
final class Liveness: Sendable {
    /// When the client last sent anything.
    private let lastHeard = Atomic<Int64>(MonotonicClock.nanoseconds())
    /// When the unanswered ping went out, or 0.
    private let pingedAt = Atomic<Int64>(0)
    /// When the first byte of the frame still incomplete arrived, or 0 (the frame deadline).
    private let partialSince = Atomic<Int64>(0)

    enum Verdict: Equatable {
        case alive
        /// Silent for an interval: ping it.
        case ping
        /// Pinged an interval ago with no answer: say goodbye and close.
        case gone
    }

    /// Bytes arrived (any bytes answer a ping).
    func heard(at now: Int64) {
        lastHeard.store(now, ordering: .relaxed)
        pingedAt.store(0, ordering: .relaxed)
    }

    /// The read path's view of the unfinished frame after a read: whether bytes of one are
    /// buffered, whether a frame completed, and whether the client is waiting on the daemon
    /// (held back by its uid's share: no deadline runs then).
    func partialFrame(buffered: Bool, completedFrame: Bool, heldBack: Bool, at now: Int64) {
        if !buffered || heldBack {
            partialSince.store(0, ordering: .relaxed)
        } else if completedFrame || partialSince.load(ordering: .relaxed) == 0 {
            partialSince.store(now, ordering: .relaxed)
        }
    }

    /// Whether the unfinished frame began more than `timeout` ago.
    func frameDeadlinePassed(at now: Int64, timeout: Int64) -> Bool {
        let since = partialSince.load(ordering: .relaxed)
        return since != 0 && now - since >= timeout
    }

    /// What the sweep should do with a client, given the ping interval; records a ping it orders.
    func check(at now: Int64, interval: Int64) -> Verdict {
        let pinged = pingedAt.load(ordering: .relaxed)
        if pinged != 0 { return now - pinged >= interval ? .gone : .alive }
        guard now - lastHeard.load(ordering: .relaxed) >= interval else { return .alive }
        pingedAt.store(now, ordering: .relaxed)
        return .ping
    }
}
