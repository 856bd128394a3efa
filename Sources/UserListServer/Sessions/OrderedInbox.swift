import ThreadLocks

/// The queue between a connection's event loop, which parses frames, and the connection's
/// ordered task, which talks to the session: one producer, one consumer, first in, first out.
///
/// What `AsyncStream` did here, for less: its `yield` and `next` were 8% of the daemon's CPU
/// on a stream of intents (generic metadata lookups, its own lock, and a deque shifting on
/// every removal). The common case, an item already queued when the task asks, takes one lock
/// and no suspension.
final class OrderedInbox<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        /// Index of the oldest item not yet taken; the taken ones are dropped in batches.
        var head = 0
        var waiter: UnsafeContinuation<Element?, Never>?
        var finished = false

        mutating func popFirst() -> Element? {
            guard head < items.count else { return nil }
            let item = items[head]
            head += 1
            if head == items.count {
                items.removeAll(keepingCapacity: items.capacity <= 64)
                head = 0
            } else if head >= 64, head * 2 >= items.count {
                items.removeFirst(head)
                head = 0
            }
            return item
        }
    }

    private let state = Lock(State())

    /// Queues `item` for the task, or drops it once `finish` was called.
    func push(_ item: Element) {
        let waiter = state.withLock { state -> UnsafeContinuation<Element?, Never>? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.items.append(item)
            return nil
        }
        waiter?.resume(returning: item)
    }

    /// No more items: the task gets those still queued, then nil.
    func finish() {
        let waiter = state.withLock { state -> UnsafeContinuation<Element?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The next item, waiting for one if none is queued; nil once finished and drained.
    /// One consumer only.
    func next() async -> Element? {
        let ready = state.withLock { state -> Element?? in
            if let item = state.popFirst() { return .some(item) }
            return state.finished ? .some(nil) : nil
        }
        if let ready { return ready }
        return await withUnsafeContinuation { continuation in
            let ready = state.withLock { state -> Element?? in
                if let item = state.popFirst() { return .some(item) }
                if state.finished { return .some(nil) }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
