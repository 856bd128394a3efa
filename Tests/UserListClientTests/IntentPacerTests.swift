import Testing
import UserListClient

/// The pacer that keeps a client under its daemon's per-client limit (issue 27 item 3), on a
/// clock the test moves: a short burst, then a steady three quarters of the limit.
@Suite struct IntentPacerTests {
    /// Send times of `count` intents asked for all at once from `start`.
    static func sendTimes(limit: Int, count: Int) -> [Duration] {
        var pacer = IntentPacer(limit: limit)
        let start = ContinuousClock.now
        return (0..<count).map { _ in pacer.reserve(now: start) }
    }

    @Test func aBurstThenTheSteadyRate() {
        let times = Self.sendTimes(limit: 200, count: 400)
        #expect(times.prefix(10).allSatisfy { $0 == .zero }, "a twentieth of the limit goes at once")
        #expect(times[10] > .zero)
        let gaps = zip(times.dropFirst(10), times.dropFirst(11)).map { $1 - $0 }
        #expect(gaps.allSatisfy { $0 >= .milliseconds(6) && $0 <= .microseconds(6_700) }, "150 a second: \(gaps.prefix(3))")
    }

    /// Any window of 1.2 s (a second of the daemon's, read up to 0.2 s late) holds at most the
    /// limit, for limits from 1 to 5,000.
    @Test func noWindowHoldsMoreThanTheLimit() {
        for limit in [1, 2, 4, 5, 20, 200, 1_000, 5_000] {
            let times = Self.sendTimes(limit: limit, count: limit * 4 + 10)
            var first = 0
            for last in times.indices {
                while times[last] - times[first] >= .milliseconds(1_200) { first += 1 }
                #expect(last - first + 1 <= limit, "limit \(limit): \(last - first + 1) within 1.2 s")
                if last - first + 1 > limit { break }
            }
        }
    }

    @Test func timeSpentIdleIsNotSavedUp() {
        var pacer = IntentPacer(limit: 200)
        let start = ContinuousClock.now
        for _ in 0..<50 { _ = pacer.reserve(now: start) }
        // An hour later only a burst goes at once again, not the hour's worth.
        let later = start + .seconds(3_600)
        let waits = (0..<11).map { _ in pacer.reserve(now: later) }
        #expect(waits.prefix(10).allSatisfy { $0 == .zero } && waits[10] > .zero, "\(waits)")
    }
}
