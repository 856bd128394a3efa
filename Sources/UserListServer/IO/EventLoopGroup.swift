import Synchronization

/// Several event loops, one thread each, sharing the connections: a connection is read, and its
/// session runs (the loop is its actor's executor), on the loop it was given when it was
/// accepted, so the work of many clients spreads over the cores instead of queueing on one thread.
package final class EventLoopGroup: Sendable {
    package let loops: [EventLoop]
    private let turn = Atomic<Int>(0)

    /// The most loops a group runs: a change is published to every loop as a job of its own.
    package static let limit = 4

    /// `count` loops (one per core, or as configured), at least one and at most `limit`.
    package init(count: Int) throws(SystemError) {
        var loops: [EventLoop] = []
        for _ in 0..<max(1, min(count, Self.limit)) { loops.append(try EventLoop()) }
        self.loops = loops
    }

    /// The loop that watches the listening socket.
    package var first: EventLoop { loops[0] }

    /// The loop for the next connection, in turn.
    package func next() -> EventLoop {
        loops[turn.add(1, ordering: .relaxed).oldValue % loops.count]
    }

    package func start() {
        for (index, loop) in loops.enumerated() { loop.start(name: "userlistd-io\(index)") }
    }

    package func stop() {
        for loop in loops { loop.stop() }
    }
}
