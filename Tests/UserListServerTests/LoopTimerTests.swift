import Foundation
import Testing
import UserListTestSupport
import ThreadLocks
@testable import UserListServer

/// The loop keeps its own time: jobs set with a delay run on the loop thread once due, woken by
/// `epoll_wait`'s timeout, earliest first; a loop that exits runs what it still holds.
@Suite struct LoopTimerTests {
    /// The heap alone, with a clock the test sets: jobs come out in due order, in the order set
    /// among equals, and only once due.
    @Test func theHeapGivesTheDueJobsInDueOrder() {
        var timers = LoopTimers()
        let ran = Lock<[Int]>([])
        var dues: [Int64] = []
        var seed: UInt64 = 47
        for index in 0..<300 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let due = Int64(seed >> 57)  // 0..<128: many equal deadlines
            dues.append(due)
            _ = timers.insert(due: due) { ran.withLock { $0.append(index) } }
        }
        let expected = dues.indices.sorted { (dues[$0], $0) < (dues[$1], $1) }
        for job in timers.takeDue(now: { 63 }) { job() }
        #expect(ran.withLock { $0 } == expected.filter { dues[$0] <= 63 })
        #expect(timers.timeoutMilliseconds(now: { 63 }) == 1, "the next is due within the millisecond")
        for job in timers.takeAll() { job() }
        #expect(ran.withLock { $0 } == expected)
        #expect(timers.isEmpty)
    }

    @Test func theTimeoutIsTheWaitUntilTheEarliestRoundedUp() {
        var timers = LoopTimers()
        #expect(timers.timeoutMilliseconds(now: { 0 }) == -1, "no timer: wait for events alone")
        #expect(timers.insert(due: 5_000_000_000) {}, "the first is the earliest")
        #expect(timers.insert(due: 1_500_000) {}, "an earlier one is the earliest")
        #expect(!timers.insert(due: 3_000_000) {}, "a later one is not")
        #expect(timers.timeoutMilliseconds(now: { 0 }) == 2)
        #expect(timers.timeoutMilliseconds(now: { 1_500_000 }) == 0)
        #expect(timers.timeoutMilliseconds(now: { 9_000_000 }) == 0, "overdue: do not sleep")
        #expect(timers.takeDue(now: { 1_499_999 }).isEmpty)
        #expect(timers.takeDue(now: { 3_000_000 }).count == 2)
        #expect(timers.count == 1)
    }

    /// Set from another thread while the loop sleeps with no deadline: the loop wakes, counts
    /// with them and runs each on its thread, no earlier than its delay, earliest first.
    @Test(.timeLimit(.minutes(2)))
    func timersRunOnTheLoopThreadInDueOrder() async throws {
        let loop = try EventLoop()
        loop.start(name: "test-timer-loop")
        defer { loop.stop() }
        let ran = Lock<[(name: String, onLoop: Bool, after: Duration)]>([])
        let timerRan = Pulse()
        let set = ContinuousClock.now
        func timer(_ name: String, _ delay: Duration) {
            loop.execute(after: delay) {
                ran.withLock { $0.append((name, loop.isLoopThread, ContinuousClock.now - set)) }
                timerRan.beat()
            }
        }
        timer("later", .milliseconds(60))
        timer("sooner", .milliseconds(20))
        timer("sooner, set second", .milliseconds(20))
        #expect(await timerRan.until { ran.withLock { $0.count } == 3 })
        let seen = ran.withLock { $0 }
        #expect(seen.map(\.name) == ["sooner", "sooner, set second", "later"])
        #expect(seen.map(\.onLoop) == [true, true, true], "a timer ran off the loop thread")
        // A lower bound, which no slow machine can break.
        #expect(seen.last.map { $0.after >= .milliseconds(60) } == true, "ran before its delay")
        #expect(loop.timerCount == 0)
    }

    /// A timer earlier than the one the loop sleeps until wakes it; one still pending when the
    /// loop exits runs then, and one set after runs at once.
    @Test(.timeLimit(.minutes(2)))
    func anEarlierTimerWakesTheLoopAndAnExitRunsWhatIsLeft() async throws {
        let loop = try EventLoop()
        loop.start(name: "test-timer-exit")
        let inAnHour = Flag(), soon = Flag(), afterTheExit = Flag()
        loop.execute(after: .seconds(3_600)) { inAnHour.set() }
        loop.execute(after: .milliseconds(10)) { soon.set() }
        #expect(await soon.wait())
        #expect(!inAnHour.isSet)
        #expect(loop.timerCount == 1)
        loop.stop()
        #expect(await inAnHour.wait(), "the exit ran the pending timer")
        loop.execute(after: .seconds(3_600)) { afterTheExit.set() }
        #expect(await afterTheExit.wait(), "a stopped loop keeps no time")
        #expect(loop.timerCount == 0)
    }
}
