import Glibc

/// A thread of its own that runs jobs one at a time, in the order they were queued: for work
/// that blocks (a store's writes wait on `fsync` and on other processes' locks) and keeps state
/// that belongs to one thread.
///
/// Why not a serial `DispatchQueue`: GCD runs a serial queue's jobs on whichever worker thread
/// is free, and glibc gives each thread a malloc arena of its own, so memory allocated by one
/// job (an SQLite page cache) was freed into another arena by the next and not reused: a 64 MiB
/// page cache took the daemon's peak RSS from 80 to 178-224 MiB, 110 MiB with one arena
/// (BENCHMARKS.md, "Where the time goes"). One named thread also shows whose work it is in
/// `top -H`, perf and strace.
///
/// The thread ends once `finish()` is called and the jobs queued before it have run. Locks
/// are a pthread mutex and condition, which ThreadSanitizer sees.
public final class JobThread: @unchecked Sendable {
    // Invariant (why @unchecked is sound): `jobs` and `finishing` are read and written only
    // while holding `mutex`; `thread` is written once, by `init`, before any job can run.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [@Sendable () -> Void] = []
    private var finishing = false
    private var thread = pthread_t()

    /// Starts the thread; `name` is what `ps -L` and perf show (at most 15 bytes).
    public init(name: String) {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(wake, nil)
        let box = Unmanaged.passRetained(Start(owner: self, name: name))
        let rc = pthread_create(&thread, nil, { raw in
            let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
            JobThread.nameThisThread(start.name)
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

    /// What the new thread needs: it holds the owner until its last job has run.
    private final class Start: @unchecked Sendable {
        // Invariant: made by `init`, handed to the new thread, never shared after.
        let owner: JobThread
        let name: String
        init(owner: JobThread, name: String) {
            self.owner = owner
            self.name = name
        }
    }

    /// Queues `job` to run after every job queued before it.
    public func async(_ job: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(mutex)
        jobs.append(job)
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

    /// Lets the thread end once the jobs queued so far have run.
    public func finish() {
        pthread_mutex_lock(mutex)
        finishing = true
        pthread_cond_signal(wake)
        pthread_mutex_unlock(mutex)
    }

    private func runJobs() {
        while true {
            pthread_mutex_lock(mutex)
            while jobs.isEmpty && !finishing { pthread_cond_wait(wake, mutex) }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            let last = batch.isEmpty && finishing
            pthread_mutex_unlock(mutex)
            if last { return }
            for job in batch { job() }
        }
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
