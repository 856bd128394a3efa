import Synchronization

/// Changes waiting for one session. The broadcaster's thread posts them here; the session takes
/// them on its own actor, all that are waiting at once, in order.
///
/// A post that finds the inbox idle asks for one task to wake the session; until the session
/// takes the batch, further posts only queue. So while a session is busy its changes pile up and
/// are applied together (an import's thousands of changes cost a session a few diffs, with no
/// timer deciding what a burst is), and a session that knows a change is waiting (its own save,
/// just committed) can take it at once without waiting for that task. Taking happens only on the
/// session's actor, so batches never overtake each other.
final class ChangeInbox: Sendable {
    private struct Queue {
        var pending: [ChangeBroadcaster.Delivery] = []
        /// A wake-up task is on its way for what is pending.
        var wakeScheduled = false
    }

    private let queue = Mutex(Queue())

    /// Queues `delivery`; returns true when the caller must wake the session (start a task
    /// that makes it `take()`).
    func post(_ delivery: ChangeBroadcaster.Delivery) -> Bool {
        queue.withLock { queue in
            queue.pending.append(delivery)
            guard !queue.wakeScheduled else { return false }
            queue.wakeScheduled = true
            return true
        }
    }

    /// Everything waiting, oldest first. Only on the session's actor.
    func take() -> [ChangeBroadcaster.Delivery] {
        queue.withLock { queue in
            queue.wakeScheduled = false
            guard !queue.pending.isEmpty else { return [] }
            defer { queue.pending.removeAll(keepingCapacity: true) }
            return queue.pending
        }
    }
}
