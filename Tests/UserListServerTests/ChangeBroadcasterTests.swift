import Dispatch
import Foundation
import Synchronization
import Testing
import UserListDomain
import UserListServer

/// The broadcaster never calls out under its lock: sessions that subscribe and go away while
/// changes are delivered must neither deadlock it nor be remembered after they left.
@Suite struct ChangeBroadcasterTests {
    /// A feed the test writes to.
    final class ManualFeed: UserChangeFeed {
        let stream: AsyncStream<UserChange>
        let continuation: AsyncStream<UserChange>.Continuation
        init() { (stream, continuation) = AsyncStream.makeStream(of: UserChange.self, bufferingPolicy: .unbounded) }
        func subscribe() -> AsyncStream<UserChange> { stream }
    }

    @Test(.timeLimit(.minutes(5)))
    func sessionsComingAndGoingDuringBroadcastsNeverDeadlock() async throws {
        let feed = ManualFeed()
        let broadcaster = ChangeBroadcaster(feed: feed)
        let changes = 20_000
        let rounds = 2_000
        // Threads, not tasks: a deadlock must not be able to hide by starving the pool, and the
        // semaphore turns a hang into a failure instead of a stuck test run.
        let done = DispatchSemaphore(value: 0)
        let writer = Thread {
            for index in 0..<changes { feed.continuation.yield(.removed(id: UUID(uuid: Self.uuid(index)))) }
            done.signal()
        }
        let churner = Thread {
            for _ in 0..<rounds {
                // Subscribe, then drop the stream at once: its termination runs on whichever
                // thread lets go, racing the broadcaster's delivery.
                var stream: AsyncStream<ChangeBroadcaster.Delivery>? = broadcaster.subscribe()
                _ = stream
                stream = nil
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
        #expect(finished, "the broadcaster or a subscriber hung")
        #expect(await LifecycleTests.eventually { broadcaster.subscriberCount == 0 }, "dropped subscribers are forgotten")
        // And it still delivers to a new subscriber.
        let stream = broadcaster.subscribe()
        let id = UUID()
        feed.continuation.yield(.removed(id: id))
        var iterator = stream.makeAsyncIterator()
        var seen = false
        while let delivery = await iterator.next() {
            if delivery.change.userID == id { seen = true; break }
        }
        #expect(seen)
    }

    /// A resync reaches every session in its place among the changes, with no `changed` event
    /// (the protocol has none for it: clients see the reload as a patch).
    @Test func aResyncIsPassedOnInOrderWithoutAnEventFrame() async {
        let feed = ManualFeed()
        let broadcaster = ChangeBroadcaster(feed: feed)
        let stream = broadcaster.subscribe()
        let before = UUID(), after = UUID()
        feed.continuation.yield(.removed(id: before))
        feed.continuation.yield(.resync)
        feed.continuation.yield(.removed(id: after))
        var deliveries: [ChangeBroadcaster.Delivery] = []
        for await delivery in stream {
            deliveries.append(delivery)
            if deliveries.count == 3 { break }
        }
        #expect(deliveries.map(\.change) == [.removed(id: before), .resync, .removed(id: after)])
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
