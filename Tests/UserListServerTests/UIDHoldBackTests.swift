import Testing
@testable import UserListServer

/// The uid hold-back stage alone: one wait per window, until released.
@Suite struct UIDHoldBackTests {
    @Test func aConnectionIsHeldOnceUntilTheWindowEndsThenReleased() {
        var holdBack = UIDHoldBack()
        #expect(!holdBack.isHolding)
        #expect(holdBack.hold(until: 1_500, now: 1_000) == .nanoseconds(500))
        #expect(holdBack.isHolding, "frames wait in the decoder")
        #expect(holdBack.hold(until: 2_000, now: 1_100) == nil, "held already: no second timer")
        holdBack.release()
        #expect(!holdBack.isHolding)
        #expect(holdBack.hold(until: 900, now: 1_000) == .zero, "a window already over: resume at once")
    }
}
