import ThreadLocks

/// The TUI's inputs (keys, updates, ticks...) as batches: producers append, and the view takes
/// everything pending at once, handles it, and draws once.
///
/// Why not an `AsyncStream` of inputs, one draw each: a burst of N updates (an import of 50,000
/// users used to send a `changed` event per user) queued N inputs, each followed by a full draw of
/// the screen (milliseconds: every row's display width is measured), and the keys typed meanwhile
/// waited behind all of them: the TUI spun and ignored every key, Ctrl-C included, for minutes.
/// Handling an input is cheap; drawing is not, and only the last state needs drawing.
final class InputQueue<Element: Sendable>: Sendable {
    private let pending = Lock<[Element]>([])
    private let wake: AsyncStream<Void>.Continuation
    /// One element whenever inputs are pending (at most one buffered: a wake covers them all).
    let wakes: AsyncStream<Void>

    init() {
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Appends `element`; callable from any thread.
    func yield(_ element: Element) {
        pending.withLock { $0.append(element) }
        wake.yield()
    }

    /// Everything pending, in the order it came, leaving the queue empty.
    func takeAll() -> [Element] {
        pending.withLock { queue in
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
    }
}
