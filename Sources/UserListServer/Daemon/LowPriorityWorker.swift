import Foundation
import ThreadLocks
import Glibc

/// A serial queue on a thread of its own that runs at the lowest CPU priority Linux has
/// (`SCHED_IDLE`, and nice +10 where that policy is refused), for background work that must not
/// delay sessions: the session journal's encoding and fdatasync.
///
/// Why not a Dispatch queue: Dispatch's worker threads also run Swift's global executor (the
/// sessions), so a niced Dispatch thread would slow whatever session it ran next. On Linux the
/// nice value and the policy belong to the thread, so this one thread carries them alone. When a
/// session wakes on a core where this thread is running, the session goes first. `SCHED_IDLE`
/// rather than nice alone: with nice +10 the journal still cost one session's round trip 12-22%
/// at p99; with `SCHED_IDLE`, 0.95-1.01x (BENCHMARKS.md, "Crash-safe sessions"). Under a CPU
/// saturated for long, the journal then writes later (it still gets a small share), so a kill -9
/// at such a time may lose more than the interval's typing.
final class LowPriorityWorker: @unchecked Sendable {
    // Invariant that makes it Sendable: `jobs`, `stopped` and `nextSequence` are touched only
    // under `condition`.
    private final class Shared: @unchecked Sendable {
        let condition = NSCondition()
        /// Due time (monotonic nanoseconds), arrival order, work.
        var jobs: [(due: UInt64, sequence: Int, work: () -> Void)] = []
        var nextSequence = 0
        var stopped = false
    }

    private let shared = Shared()

    static let niceness: Int32 = 10
    /// Linux's SCHED_IDLE policy (a GNU extension Glibc's Swift module does not export).
    static let schedIdle: Int32 = 5

    init(name: String) {
        let shared = self.shared
        let thread = Thread { Self.run(shared) }
        thread.name = name
        thread.start()
    }

    deinit {
        shared.condition.lock()
        shared.stopped = true
        shared.condition.signal()
        shared.condition.unlock()
    }

    /// Runs `work` after the jobs already queued.
    func async(_ work: @escaping @Sendable () -> Void) {
        enqueue(due: 0, work)
    }

    /// Runs `work` once `delay` has passed (after jobs due earlier).
    func async(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
        let nanoseconds = UInt64(max(0, delay.components.seconds)) * 1_000_000_000
            + UInt64(max(0, delay.components.attoseconds / 1_000_000_000))
        enqueue(due: Self.now() + nanoseconds, work)
    }

    /// Runs `work` after the jobs already due and waits for it. Never from the worker itself.
    func sync<T: Sendable>(_ work: @escaping () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Lock<T?>(nil)
        enqueue(due: 0) {
            let value = work()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }!
    }

    private func enqueue(due: UInt64, _ work: @escaping () -> Void) {
        shared.condition.lock()
        shared.jobs.append((due, shared.nextSequence, work))
        shared.nextSequence += 1
        shared.condition.signal()
        shared.condition.unlock()
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private static func run(_ shared: Shared) {
        // On Linux the nice value is the thread's own, and `who` 0 names the calling thread.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness)
        // Policy and nice value are the calling thread's alone (pid 0 names it).
        var parameters = sched_param(sched_priority: 0)
        _ = sched_setscheduler(0, schedIdle, &parameters)
        shared.condition.lock()
        while true {
            // The job due first (the earlier queued among equals) runs, or is waited for.
            let next = shared.jobs.indices.min {
                (shared.jobs[$0].due, shared.jobs[$0].sequence) < (shared.jobs[$1].due, shared.jobs[$1].sequence)
            }
            let now = Self.now()
            if let next, shared.jobs[next].due <= now {
                let job = shared.jobs.remove(at: next)
                shared.condition.unlock()
                job.work()
                shared.condition.lock()
                continue
            }
            // Stopped: the jobs still queued hold the owner's work (the journal's last batch
            // runs before its `finish`), so the thread ends only once none is left.
            if shared.stopped && shared.jobs.isEmpty { break }
            if let next {
                _ = shared.condition.wait(until: Date(timeIntervalSinceNow: Double(shared.jobs[next].due - now) / 1_000_000_000))
            } else {
                shared.condition.wait()
            }
        }
        shared.condition.unlock()
    }
}
