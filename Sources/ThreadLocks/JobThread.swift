import Glibc

/// A thread of its own that runs jobs one at a time, in the order they were queued: for work
/// that blocks (a store's writes wait on `fsync` and on other processes' locks, the session
/// journal's on `fdatasync`) and keeps state that belongs to one thread (`Confined`).
///
/// Why not a serial `DispatchQueue`: GCD runs a serial queue's jobs on whichever worker thread
/// is free, and glibc gives each thread a malloc arena of its own, so memory allocated by one
/// job (an SQLite page cache) was freed into another arena by the next and not reused: a 64 MiB
/// page cache took the daemon's peak RSS from 80 to 178-224 MiB, 110 MiB with one arena
/// (BENCHMARKS.md, "Where the time goes"). One named thread also shows whose work it is in
/// `top -H`, perf and strace.
///
/// Jobs can also be queued to run once a delay has passed (`async(after:_:)`): the thread
/// waits for the earliest with a timed wait, so a periodic job needs no timer thread.
///
/// The thread ends once `finish()` is called and the jobs queued before it (delayed ones
/// included, once due) have run. Locks are a pthread mutex and condition, which
/// ThreadSanitizer sees.
public final class JobThread: @unchecked Sendable {
    /// How the thread competes for the CPU.
    public enum Priority: Sendable {
        /// As every other thread of the process.
        case normal
        /// The lowest Linux has (`SCHED_IDLE`, and nice +10 where that policy is refused), for
        /// background work that must not delay sessions (the session journal's encoding and
        /// `fdatasync`). On Linux the nice value and the policy belong to the thread, so this one
        /// thread carries them alone; a niced Dispatch thread would also run Swift's global
        /// executor (the sessions) and slow whichever session it ran next. When a session wakes
        /// on a core where this thread runs, the session goes first. `SCHED_IDLE` rather than
        /// nice alone: with nice +10 the journal still cost one session's round trip 12-22% at
        /// p99; with `SCHED_IDLE`, 0.95-1.01x (BENCHMARKS.md, "Crash-safe sessions"). Under a
        /// CPU saturated for long, the jobs then run later (they still get a small share).
        case idle
    }

    /// A job queued with a delay: due at a monotonic time, in queue order among equals.
    private struct Delayed {
        let due: UInt64
        let job: @Sendable () -> Void
    }

    // Invariant (why @unchecked is sound): `jobs`, `delayed` and `finishing` are read and
    // written only while holding `mutex`; `thread` is written once, by `init`, before any job
    // can run.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [@Sendable () -> Void] = []
    /// Sorted by `due`, queue order among equals.
    private var delayed: [Delayed] = []
    private var finishing = false
    private var thread = pthread_t()

    /// Starts the thread; `name` is what `ps -L` and perf show (at most 15 bytes).
    public init(name: String, priority: Priority = .normal) {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)  // delays are monotonic
        pthread_cond_init(wake, &attributes)
        pthread_condattr_destroy(&attributes)
        let box = Unmanaged.passRetained(Start(owner: self, name: name, priority: priority))
        let rc = pthread_create(&thread, nil, { raw in
            let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
            JobThread.nameThisThread(start.name)
            if start.priority == .idle { JobThread.lowerThisThread() }
            start.owner.runJobs()
            return nil
        }, box.toOpaque())
        precondition(rc == 0, "pthread_create failed: \(rc)")
        pthread_detach(thread)
    }

    deinit {
        pthread_cond_destroy(wake)
        pthread_mutex_destroy(mutex)
        wake.deallocate()
        mutex.deallocate()
    }

    /// Names the calling thread (what `pthread_setname_np` does, which Glibc's module does not
    /// export): the kernel takes the first 15 bytes written to its `comm`.
    private static func nameThisThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// Linux's SCHED_IDLE policy (a GNU extension Glibc's Swift module does not export).
    static let schedIdle: Int32 = 5
    static let idleNiceness: Int32 = 10

    /// Gives the calling thread the `.idle` priority: nice +10 (on Linux the nice value is the
    /// thread's own, and `who` 0 names the calling thread), then `SCHED_IDLE` (pid 0 names it).
    private static func lowerThisThread() {
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, idleNiceness)
        var parameters = sched_param(sched_priority: 0)
        _ = sched_setscheduler(0, schedIdle, &parameters)
    }

    /// What the new thread needs: it holds the owner until its last job has run.
    private final class Start: @unchecked Sendable {
        // Invariant: made by `init`, handed to the new thread, never shared after.
        let owner: JobThread
        let name: String
        let priority: Priority
        init(owner: JobThread, name: String, priority: Priority) {
            self.owner = owner
            self.name = name
            self.priority = priority
        }
    }

    /// Queues `job` to run after every job queued before it.
    public func async(_ job: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(mutex)
        jobs.append(job)
        pthread_cond_signal(wake)
        pthread_mutex_unlock(mutex)
    }

    /// Queues `job` to run once `delay` has passed, after the jobs due before it (and after any
    /// queued without a delay that are waiting when it comes due).
    public func async(after delay: Duration, _ job: @escaping @Sendable () -> Void) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds / 1_000_000_000))
        let due = Self.now() + nanoseconds
        pthread_mutex_lock(mutex)
        let index = delayed.firstIndex { $0.due > due } ?? delayed.endIndex
        delayed.insert(Delayed(due: due, job: job), at: index)
        pthread_cond_signal(wake)
        pthread_mutex_unlock(mutex)
    }

    /// Runs `body` on the thread after the jobs queued before it, and waits for it. Never from
    /// the thread itself (it would wait for itself).
    public func sync<T>(_ body: () -> T) -> T {
        precondition(!isCurrent, "JobThread.sync called from its own thread")
        return withoutActuallyEscaping(body) { body in
            let done = Done(body)
            async { done.run() }
            return done.waitForResult()
        }
    }

    /// Whether the caller is this thread.
    public var isCurrent: Bool { pthread_equal(pthread_self(), thread) != 0 }

    /// Lets the thread end once the jobs queued so far have run (delayed ones once due).
    public func finish() {
        pthread_mutex_lock(mutex)
        finishing = true
        pthread_cond_signal(wake)
        pthread_mutex_unlock(mutex)
    }

    private func runJobs() {
        while true {
            pthread_mutex_lock(mutex)
            var batch: [@Sendable () -> Void]
            while true {
                let now = Self.now()
                let due = delayed.firstIndex { $0.due > now } ?? delayed.endIndex
                if !jobs.isEmpty || due > 0 {
                    batch = jobs
                    jobs.removeAll(keepingCapacity: true)
                    batch.append(contentsOf: delayed[..<due].lazy.map(\.job))
                    delayed.removeFirst(due)
                    break
                }
                if finishing && delayed.isEmpty {
                    pthread_mutex_unlock(mutex)
                    return
                }
                if let first = delayed.first {
                    var until = timespec(tv_sec: Int(first.due / 1_000_000_000),
                                         tv_nsec: Int(first.due % 1_000_000_000))
                    _ = pthread_cond_timedwait(wake, mutex, &until)
                } else {
                    pthread_cond_wait(wake, mutex)
                }
            }
            pthread_mutex_unlock(mutex)
            for job in batch { job() }
        }
    }

    /// CLOCK_MONOTONIC in nanoseconds (the clock the condition waits on).
    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// A `sync` job: its closure, run on the thread, and the result handed to the waiting caller.
    private final class Done<T>: @unchecked Sendable {
        // Invariant: `body` is set before the job is queued (the queue's mutex orders it before
        // the thread reads it); `result` is written on the thread before `sem_post` and read
        // after `sem_wait`, which orders the two. The closure is let go before the post: `sync`
        // checks that it did not escape once the caller has the result.
        private let finished = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        private var body: (() -> T)?
        private var result: T?

        init(_ body: @escaping () -> T) {
            sem_init(finished, 0, 0)
            self.body = body
        }

        deinit {
            sem_destroy(finished)
            finished.deallocate()
        }

        /// On the thread.
        func run() {
            do {
                let body = self.body!
                self.body = nil
                result = body()
            }
            sem_post(finished)
        }

        func waitForResult() -> T {
            while sem_wait(finished) != 0 {}  // EINTR
            return result!
        }
    }
}
