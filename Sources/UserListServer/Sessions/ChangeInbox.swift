import Synchronization

/// Changes waiting for one session: the broadcaster's thread queues them here, and one task per
/// burst carries the whole queue onto the session's actor.
///
/// One task per burst, not per change: while a session is busy, the changes that arrive pile up
/// and are applied together, so an import of thousands of rows costs each session one diff and
/// one patch, with no timer deciding what counts as a burst.
final class ChangeInbox: Sendable {
    private struct Queue {
        var pending: [ChangeBroadcaster.Delivery] = []
        /// A task is on its way (or running) to empty `pending`.
        var draining = false
    }

    private let queue = Mutex(Queue())
    private let receive: @Sendable ([ChangeBroadcaster.Delivery]) async -> Void

    /// `receive` gets each batch in order, one batch at a time.
    init(receive: @escaping @Sendable ([ChangeBroadcaster.Delivery]) async -> Void) {
        self.receive = receive
    }

    func post(_ delivery: ChangeBroadcaster.Delivery) {
        let start = queue.withLock { queue -> Bool in
            queue.pending.append(delivery)
            guard !queue.draining else { return false }
            queue.draining = true
            return true
        }
        if start { Task { await self.drain() } }
    }

    /// Hands over batches until none is left; only then may the next `post` start a task, so
    /// batches never overtake each other.
    private func drain() async {
        while true {
            let batch = queue.withLock { queue -> [ChangeBroadcaster.Delivery] in
                let batch = queue.pending
                queue.pending.removeAll(keepingCapacity: true)
                if batch.isEmpty { queue.draining = false }
                return batch
            }
            if batch.isEmpty { return }
            await receive(batch)
        }
    }
}
