/// The loop as the serial executor of the sessions it owns (`Session.unownedExecutor`): a
/// session's actor runs on its loop's thread, so its state has one owner, and a change the loop
/// publishes is applied to each of its sessions in place (`Session.enterOnLoop`). That is the
/// loop's one executor role. Nothing prefers the loop as a task executor: what a session awaits
/// outside itself (a store read) runs off the loop, and so does a connection's ordered task,
/// which enters its session's actor for each item.
///
/// Jobs are always queued, never run inside the caller (the caller may be a handler in the
/// middle of a read, or another job): the loop runs them after the events of its current turn,
/// in one queue with the loop's other jobs (`execute`), in the order queued.
extension EventLoop: SerialExecutor {
    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        schedule { job.runSynchronously(on: executor) }
    }

    package func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Lets `assumeIsolated` on a session of this loop succeed from a plain loop job, and makes it
    /// fail loudly anywhere else.
    package func checkIsolated() {
        precondition(runsJobsOnThisThread, "not on the event loop thread that owns this session")
    }

    package func isIsolatingCurrentContext() -> Bool? { runsJobsOnThisThread }
}
