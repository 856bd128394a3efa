import ThreadLocks
import UserListPresentation
import UserListWire

/// The committed changes one event loop applies to the sessions it owns.
///
/// The store's writer only commits and publishes: `ChangeBroadcaster` hands each change to every
/// loop's feed, which queues it and asks its loop for one job per burst. That job runs on the
/// loop's thread, which is every one of its sessions' executor, so it enters each session in
/// place (`enterOnLoop`, no task and no hop), applies everything queued, and the session
/// writes its own clients' patches. A list window that several sessions show is computed once
/// per change on the loop (`ChangeMemo`), and so are its patch's bytes: the one path every
/// session takes, whatever it shows.
final class LoopChangeFeed: Sendable {
    let loop: EventLoop
    private struct Queue {
        var deliveries: [ChangeBroadcaster.Delivery] = []
        /// A job is on its way to the loop.
        var scheduled = false
    }

    /// The hand-off between the publishing thread and the loop (the one lock on this path).
    private let queue = Lock(Queue())
    /// The loop's sessions that follow changes. Held strongly, and dropped when this table is
    /// all that holds one (a session ends when nothing else holds it) or its registry ends it
    /// (`forget`): a weak reference would cost every session a side-table load per change.
    private let sessions: LoopBound<[Session]>

    /// How far this loop's sessions have been given the log, and who waits for a position.
    private struct Progress {
        var through = 0
        var waiters: [(seq: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let progress: LoopBound<Progress>

    init(loop: EventLoop) {
        self.loop = loop
        self.sessions = LoopBound([], on: loop)
        self.progress = LoopBound(Progress(), on: loop)
    }

    /// Returns once every change through log position `seq` has been applied to this loop's
    /// sessions (a writing session's reply waits for its own change). Called on the loop.
    func delivered(through seq: Int, isolation: isolated (any Actor)? = #isolation) async {
        deliverQueued()
        guard progress.value.through < seq else { return }
        await withCheckedContinuation { continuation in
            progress.value.waiters.append((seq, continuation))
        }
    }

    /// Starts applying every change published from now on to `session` (on the loop: the
    /// session's own executor).
    func follow(_ session: Session) {
        sessions.value.append(session)
    }

    /// Stops applying changes to `session` (from any thread: the registry ended it), so that it
    /// ends now rather than at the loop's next change.
    func forget(_ session: Session) {
        loop.execute { [self] in
            sessions.withValue { table in table.removeAll { $0 === session } }
        }
    }

    /// Called on the publishing thread (the store's writer): queues the change for the loop.
    func publish(_ delivery: ChangeBroadcaster.Delivery) {
        let wake = queue.withLock { queue -> Bool in
            queue.deliveries.append(delivery)
            guard !queue.scheduled else { return false }
            queue.scheduled = true
            return true
        }
        if wake { loop.schedule { [self] in deliverQueued() } }
    }

    /// Applies what is queued to every session of the loop, now: from the loop's job, or from a
    /// session that waits for its own write to come back (so its reply need not wait a turn).
    func deliverQueued() {
        let batch = queue.withLock { queue -> [ChangeBroadcaster.Delivery] in
            queue.scheduled = false
            defer { queue.deliveries.removeAll(keepingCapacity: true) }
            return queue.deliveries
        }
        guard !batch.isEmpty else { return }
        let memos = batch.map { _ in ChangeMemo(loop: loop) }
        for session in liveSessions() {
            session.enterOnLoop { $0.apply(batch, memos: memos) }
        }
        advance(through: batch[batch.count - 1].seq)
    }

    /// The sessions still alive, forgetting the ones this table alone holds (ended: nothing
    /// else holds them). Checked in place: a copy of each reference would hold it too.
    private func liveSessions() -> [Session] {
        sessions.withValue { table in
            var index = table.startIndex
            while index < table.endIndex {
                if isKnownUniquelyReferenced(&table[index]) {
                    table.swapAt(index, table.endIndex - 1)
                    table.removeLast()
                } else {
                    index += 1
                }
            }
            return table
        }
    }

    private func advance(through seq: Int) {
        progress.value.through = max(progress.value.through, seq)
        guard !progress.value.waiters.isEmpty else { return }
        let through = progress.value.through
        let ready = progress.value.waiters.filter { $0.seq <= through }
        progress.value.waiters.removeAll { $0.seq <= through }
        for waiter in ready { waiter.continuation.resume() }
    }
}

/// What one change made of the list windows on one loop, shared by the sessions there that
/// show the same window: the list state it led to, and the patch's serialized operations.
///
/// Made for one change by one loop's job, and used only on that loop's thread.
final class ChangeMemo: Sendable {
    private struct Memos {
        let lists = ListSteps()
        let patches = SharedPatches()
    }

    private let memos: LoopBound<Memos>

    init(loop: EventLoop) {
        memos = LoopBound(Memos(), on: loop)
    }

    var lists: ListSteps { memos.value.lists }

    var patches: SharedPatches { memos.value.patches }
}
