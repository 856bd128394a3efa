import ThreadLocks

/// Changes a feed took in commit order (under its own lock) handed to subscribers in that
/// order, by one thread at a time, with no lock held while a subscriber runs.
///
/// A feed learns of changes on two threads (the writer's, right after its commit, and the one
/// that reads the log for other writers' commits) and orders them under a lock of its own.
/// Calling subscribers under that lock would hold it across a call into another component (the
/// daemon's broadcaster, an `AsyncStream`); instead the feed `take`s each change under its lock
/// and calls `handOut()` after releasing it. The first thread to find nobody handing out does
/// it, and keeps on until the queue is empty, so changes taken by other threads meanwhile go
/// out after the earlier ones, never beside them.
final class OrderedHandOff<Item: Sendable>: Sendable {
    private let queue = Lock<(items: [Item], handingOut: Bool)>(([], false))
    private let deliver: @Sendable ([Item]) -> Void

    /// `deliver` is called with each run of items, oldest first, on one thread at a time.
    init(deliver: @escaping @Sendable ([Item]) -> Void) {
        self.deliver = deliver
    }

    /// Queues `item` after every item taken before it; call under the feed's ordering lock.
    func take(_ item: Item) {
        queue.withLock { $0.items.append(item) }
    }

    /// Hands out what is queued, unless another thread is doing so (it takes these too).
    func handOut() {
        var batch = queue.withLock { queue -> [Item] in
            guard !queue.handingOut, !queue.items.isEmpty else { return [] }
            queue.handingOut = true
            defer { queue.items.removeAll() }
            return queue.items
        }
        while !batch.isEmpty {
            deliver(batch)
            batch = queue.withLock { queue in
                if queue.items.isEmpty { queue.handingOut = false }
                defer { queue.items.removeAll() }
                return queue.items
            }
        }
    }
}
