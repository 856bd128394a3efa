import CLinuxIO
import Glibc
import Synchronization
import ThreadLocks

/// The work queued for one event loop's thread, and which thread that is.
///
/// The loop's plain jobs (`EventLoop.execute`) and its sessions' actor jobs (the loop is their
/// serial executor) share it. Jobs run in the order queued, one at a time: on the
/// loop thread while it runs; after it exited (a shutdown), on whichever thread queues the next
/// job, which stands in for the loop meanwhile (`isLoopThread` holds there).
final class LoopJobs: Sendable {
    private let queue = Lock<[@Sendable () -> Void]>([])
    /// Written to wake the loop from `epoll_wait` (the loop watches it).
    let wakeFD: Int32
    /// `pthread_self()` of the thread running the jobs (0 before the loop runs, and between
    /// drains after it exited).
    private let runner = Atomic<UInt>(0)
    /// Set when the loop's thread starts: before it, `EventLoop.execute` runs jobs at once.
    let started = Atomic<Bool>(false)
    /// Set once the loop thread has run its last jobs.
    private let exited = Atomic<Bool>(false)
    /// Some thread is running the jobs (the loop thread while it lives; after it exited, the
    /// thread that took the turn in `drainAfterExit`).
    private let draining = Atomic<Bool>(false)

    init() throws(SystemError) {
        wakeFD = eventfd(0, ULIO_EFD_CLOEXEC | ULIO_EFD_NONBLOCK)
        guard wakeFD >= 0 else { throw SystemError("eventfd") }
    }

    deinit { close(wakeFD) }

    /// Whether the caller is the thread that runs the jobs.
    var isLoopThread: Bool { runner.load(ordering: .acquiring) == UInt(pthread_self()) }

    /// Queues `job` for the loop's next turn (never runs it at once).
    func schedule(_ job: @escaping @Sendable () -> Void) {
        let wasEmpty = queue.withLock { queue -> Bool in
            queue.append(job)
            return queue.count == 1
        }
        if exited.load(ordering: .acquiring) {
            drainAfterExit()
        } else if wasEmpty && !isLoopThread {
            wake()  // on the loop thread, the turn under way runs it
        }
    }

    /// Whether jobs wait for the loop's next turn.
    var hasQueued: Bool { !queue.withLock { $0.isEmpty } }

    func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Runs what is queued, including what the jobs queue, until nothing is; on the runner.
    func runQueued() {
        while true {
            let batch = queue.withLock { queue -> [@Sendable () -> Void] in
                defer { queue.removeAll(keepingCapacity: true) }
                return queue
            }
            if batch.isEmpty { return }
            for job in batch { job() }
        }
    }

    /// The loop thread begins: it runs the jobs from now on.
    func loopThreadStarted() {
        draining.store(true, ordering: .releasing)
        runner.store(UInt(pthread_self()), ordering: .releasing)
    }

    /// The loop thread ends: it runs its last jobs, then gives the turn up for good.
    func loopThreadExiting() {
        exited.store(true, ordering: .releasing)
        runQueued()
        runner.store(0, ordering: .releasing)
        draining.store(false, ordering: .releasing)
        if !queue.withLock({ $0.isEmpty }) { drainAfterExit() }
    }

    /// The loop is gone, but sessions' actors and connections still count on their jobs
    /// running one at a time: the caller takes the turn (`draining`) and runs them as the loop
    /// thread; a caller that finds the turn taken leaves its job to the thread that has it, which
    /// looks again after giving the turn up. No lock is held while a job runs.
    private func drainAfterExit() {
        if isLoopThread { return }  // this thread is draining already: it takes the job
        while draining.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged {
            runner.store(UInt(pthread_self()), ordering: .releasing)
            runQueued()
            runner.store(0, ordering: .releasing)
            draining.store(false, ordering: .releasing)
            // A job queued after `runQueued` found none, by a caller that saw the turn taken.
            if queue.withLock({ $0.isEmpty }) { return }
        }
    }
}
