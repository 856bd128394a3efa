import Dispatch
import Foundation
import Synchronization
import Testing
import UserListDomain
import UserListServer
import ThreadLocks

/// The broadcaster never calls out under its lock: listeners that attach and detach while
/// changes are delivered must neither deadlock it nor be remembered after they left.
@Suite struct ChangeBroadcasterTests {
    /// A feed the test writes to: `send` calls the observers on the caller's thread, as a store's
    /// writer does, each change with the next position.
    final class ManualFeed: UserChangeFeed {
        private struct State {
            var observers: [Int: @Sendable (CommittedChange) -> Void] = [:]
            var nextID = 0
            var seq = 0
        }
        private let state = Lock(State())

        func observe(_ handler: @escaping @Sendable (CommittedChange) -> Void) -> ChangeObservation {
            let id = state.withLock { state in
                state.nextID += 1
                state.observers[state.nextID] = handler
                return state.nextID
            }
            return ChangeObservation { [weak self] in
                _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
            }
        }

        /// One sender at a time (a feed calls its observers one call at a time).
        func send(_ change: UserChange) {
            let (observers, seq) = state.withLock { state in
                state.seq += 1
                return (Array(state.observers.values), state.seq)
            }
            for observer in observers { observer(CommittedChange(change, seq: seq)) }
        }
    }

    /// What a listener was given (on the sender's thread), for the test to read.
    final class Received: Sendable {
        let deliveries = Lock<[ChangeBroadcaster.Delivery]>([])
        func append(_ delivery: ChangeBroadcaster.Delivery) { deliveries.withLock { $0.append(delivery) } }
        var all: [ChangeBroadcaster.Delivery] { deliveries.withLock { $0 } }
    }

    @Test(.timeLimit(.minutes(5)))
    func listenersComingAndGoingDuringBroadcastsNeverDeadlock() async throws {
        let feed = ManualFeed()
        let broadcaster = ChangeBroadcaster(feed: feed)
        let changes = 20_000
        let rounds = 2_000
        // Threads, not tasks: a deadlock must not be able to hide by starving the pool, and the
        // semaphore turns a hang into a failure instead of a stuck test run.
        let done = DispatchSemaphore(value: 0)
        let writer = Thread {
            for index in 0..<changes { feed.send(.removed(id: UUID(uuid: Self.uuid(index)))) }
            done.signal()
        }
        let churner = Thread {
            for _ in 0..<rounds {
                // Attach, then detach at once, racing the broadcaster's delivery.
                let id = broadcaster.attach { _ in }
                broadcaster.detach(id)
            }
            done.signal()
        }
        writer.start()
        churner.start()
        let finished = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let first = done.wait(timeout: .now() + 60) == .success
                let second = done.wait(timeout: .now() + 60) == .success
                continuation.resume(returning: first && second)
            }
        }
        #expect(finished, "the broadcaster or a listener hung")
        #expect(broadcaster.subscriberCount == 0, "detached listeners are forgotten")
        // And it still delivers to a new listener, with the change's position.
        let received = Received()
        let listener = broadcaster.attach { received.append($0) }
        defer { broadcaster.detach(listener) }
        let id = UUID()
        feed.send(.removed(id: id))
        #expect(received.all.map(\.change) == [.removed(id: id)], "delivered on the sender's thread")
        #expect(received.all.map(\.seq) == [changes + 1])
    }

    /// A resync reaches every session in its place among the changes, with no `changed` event
    /// (the protocol has none for it: clients see the reload as a patch).
    @Test func aResyncIsPassedOnInOrderWithoutAnEventFrame() async {
        let feed = ManualFeed()
        let broadcaster = ChangeBroadcaster(feed: feed)
        let received = Received()
        let listener = broadcaster.attach { received.append($0) }
        defer { broadcaster.detach(listener) }
        let before = UUID(), after = UUID()
        feed.send(.removed(id: before))
        feed.send(.resync)
        feed.send(.removed(id: after))
        let deliveries = received.all
        #expect(deliveries.map(\.change) == [.removed(id: before), .resync, .removed(id: after)])
        #expect(deliveries.map(\.seq) == [1, 2, 3])
        #expect(deliveries.map { $0.eventFrame == nil } == [false, true, false])
        #expect(ChangeBroadcaster.event(for: .resync) == nil)
    }

    static func uuid(_ index: Int) -> uuid_t {
        var bytes = [UInt8](repeating: 0, count: 16)
        withUnsafeBytes(of: UInt64(index).bigEndian) { bytes.replaceSubrange(8..<16, with: $0) }
        return (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])
    }
}
