import Foundation
import Synchronization
import Testing
@testable import UserListServer

/// A connection's intents reach its session in the order they were read, however the loop and
/// the task interleave, and closing the connection still lets queued work run.
@Suite struct OrderedInboxTests {
    @Test func itemsPushedFromAnotherThreadArriveInOrderWhileTheConsumerWaits() async {
        let inbox = OrderedInbox<Int>()
        let count = 100_000
        let producer = Thread {
            for value in 0..<count { inbox.push(value) }
            inbox.finish()
        }
        producer.start()
        var expected = 0
        while let value = await inbox.next() {
            #expect(value == expected)
            if value != expected { break }
            expected += 1
        }
        #expect(expected == count)
    }

    @Test func finishingDeliversWhatIsQueuedThenEnds() async {
        let inbox = OrderedInbox<String>()
        inbox.push("save")
        inbox.push("bye")
        inbox.finish()
        inbox.push("after the close")  // dropped: the connection is gone
        #expect(await inbox.next() == "save")
        #expect(await inbox.next() == "bye")
        #expect(await inbox.next() == nil)
        #expect(await inbox.next() == nil)
    }

    @Test func aWaitingConsumerIsWokenByFinish() async {
        let inbox = OrderedInbox<Int>()
        let started = Atomic<Bool>(false)
        async let ended: Int? = {
            started.store(true, ordering: .relaxed)
            return await inbox.next()
        }()
        while !started.load(ordering: .relaxed) { await Task.yield() }
        inbox.finish()
        #expect(await ended == nil)
    }
}
