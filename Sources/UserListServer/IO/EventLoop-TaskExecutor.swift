/// The loop as a task executor: a connection's ordered inbox task prefers it, so an intent read
/// here runs here, and so does the session it enters (a default actor runs on the preferred
/// executor of the task that enters it when it is free). A `set_draft_name` then goes from
/// `recv` to the patch's `writev` on this one thread, with no wake-up of a pool thread between.
///
/// Jobs are always queued, never run inside the caller (the caller may be a handler in the
/// middle of a read, or another job): the loop runs them after the events of its current turn.
/// Work that waits (a store read, a save) leaves the loop and comes back as a job; sessions busy
/// on a pool thread (a fan-out's catch-up) are simply entered there.
extension EventLoop: TaskExecutor {
    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        schedule { job.runSynchronously(on: executor) }
    }
}
