import Testing
@testable import UserListServer

/// The read path's stages on their own: what the sweep decides from what the loop heard, and
/// what one client may send.
@Suite struct ReadPathStageTests {
    static let second: Int64 = 1_000_000_000

    @Test func aSilentClientIsPingedOnceThenGone() {
        let liveness = Liveness()
        let start = MonotonicClock.nanoseconds()
        liveness.heard(at: start)
        #expect(liveness.check(at: start + Self.second / 2, interval: Self.second) == .alive)
        #expect(liveness.check(at: start + Self.second, interval: Self.second) == .ping)
        #expect(liveness.check(at: start + Self.second * 3 / 2, interval: Self.second) == .alive, "pinged: waits a full interval for the answer")
        #expect(liveness.check(at: start + Self.second * 2, interval: Self.second) == .gone)
    }

    @Test func anyBytesAnswerAPing() {
        let liveness = Liveness()
        let start = MonotonicClock.nanoseconds()
        liveness.heard(at: start)
        #expect(liveness.check(at: start + Self.second, interval: Self.second) == .ping)
        liveness.heard(at: start + Self.second + 1)
        #expect(liveness.check(at: start + Self.second * 2, interval: Self.second) == .alive)
    }

    @Test func theFrameDeadlineRunsFromAFramesFirstByteAndNotWhileHeldBack() {
        let liveness = Liveness()
        let start = MonotonicClock.nanoseconds()
        liveness.partialFrame(buffered: true, completedFrame: false, heldBack: false, at: start)
        liveness.partialFrame(buffered: true, completedFrame: false, heldBack: false, at: start + Self.second)  // more bytes of it
        #expect(liveness.frameDeadlinePassed(at: start + 2 * Self.second, timeout: 2 * Self.second))
        liveness.partialFrame(buffered: true, completedFrame: true, heldBack: false, at: start + 2 * Self.second)  // a new one began
        #expect(!liveness.frameDeadlinePassed(at: start + 3 * Self.second, timeout: 2 * Self.second))
        liveness.partialFrame(buffered: true, completedFrame: false, heldBack: true, at: start + 3 * Self.second)
        #expect(!liveness.frameDeadlinePassed(at: start + 60 * Self.second, timeout: 2 * Self.second), "waiting on the daemon, not the client")
    }

    @Test func aClientGetsItsShareEachSecond() {
        var admission = Admission(messagesPerSecond: 3)
        let start = ContinuousClock.now
        let admitted = (0..<5).map { _ in admission.admitMessage(now: start) }
        #expect(admitted == [true, true, true, false, false])
        let nextWindow = admission.admitMessage(now: start + .seconds(1))
        #expect(nextWindow, "a new window")
    }

    @Test func unfinishedBytesAreReportedToTheUidBudgetAsChanges() {
        var admission = Admission(messagesPerSecond: 1)
        let reported = [100, 100, 40, 0].map { admission.partialBytesDelta(buffered: $0) }
        #expect(reported == [100, nil, -60, -40])
    }
}
