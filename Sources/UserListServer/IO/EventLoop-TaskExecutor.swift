/// The loop as an executor, in two roles that are two objects, because a job does not say which
/// role it was enqueued for and each must run as it was meant to:
///
/// - **Task executor** (`EventLoop` itself), which a connection's ordered task prefers, so that
///   task runs on the loop thread where its connection is read.
/// - **Serial executor** of the sessions the loop owns (`EventLoop.actorExecutor`, returned by
///   `Session.unownedExecutor`): a session's actor runs on its loop's thread, so its state has
///   one owner, and a change the loop publishes is applied to each of its sessions in place
///   (`assumeIsolated`). A session's jobs keep their own task's executor preference (a store
///   read it awaits still runs off the loop).
///
/// Jobs are always queued, never run inside the caller (the caller may be a handler in the
/// middle of a read, or another job): the loop runs them after the events of its current turn.
extension EventLoop: TaskExecutor {
    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        schedule { job.runSynchronously(on: executor) }
    }
}

/// The serial executor of the sessions on one loop (see `EventLoop.actorExecutor`).
package final class LoopActorExecutor: SerialExecutor {
    private let jobs: LoopJobs

    init(jobs: LoopJobs) {
        self.jobs = jobs
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        jobs.schedule { job.runSynchronously(on: executor) }
    }

    package func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Lets `assumeIsolated` on a session of this loop succeed from a plain loop job (the change
    /// feed's, a connection's task), and makes it fail loudly anywhere else.
    package func checkIsolated() {
        precondition(jobs.isLoopThread, "not on the event loop thread that owns this session")
    }

    package func isIsolatingCurrentContext() -> Bool? { jobs.isLoopThread }
}
