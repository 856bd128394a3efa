import Foundation
import Testing
import ThreadLocks
import UserListDomain
@testable import UserListServer

/// The board shared with other daemons, without processes or sessions: other daemons' people
/// merge into what a session sees, per daemon, until their daemon says `gone` or stops
/// re-announcing them (expiry); this daemon's own changes leave as coalesced announcements, in
/// order, after its `gone`, and nothing after its goodbye.
@Suite struct SharedPresenceBoardTests {
    /// A relay that only counts wake-ups: the test takes the board's outgoing messages itself.
    final class FakeRelay: PresenceRelay {
        let wakes = Lock(0)
        func start(daemon: String, receive: @escaping @Sendable (PresenceMessage) -> Void,
                   outgoing: @escaping @Sendable () -> [PresenceMessage]) {}
        func wake() { wakes.withLock { $0 += 1 } }
        func stop() async {}
    }

    let user = UUID(), other = UUID()
    let t0 = ContinuousClock.now

    func shared() -> (PresenceBoard, FakeRelay) {
        let board = PresenceBoard(), relay = FakeRelay()
        board.share(through: relay, daemon: "here")
        return (board, relay)
    }

    @Test func otherDaemonsPeopleAreSeenPerDaemonUntilGoneOrExpired() {
        let (board, _) = shared()
        board.receive(.holders(daemon: "d2", user: user, [PresenceHolder(name: "bob", editing: true)]), at: t0)
        board.receive(.holders(daemon: "d3", user: user, [PresenceHolder(name: "carol", editing: false)]), at: t0 + .seconds(2))
        #expect(Set(board.others(of: user, seenBy: "s1").values.map(\.name)) == ["bob", "carol"])
        #expect(board.openElsewhere(seenBy: "s1") == [user])

        // d2 renews bob; only d3's carol goes silent past the expiry.
        board.receive(.holders(daemon: "d2", user: user, [PresenceHolder(name: "bob", editing: true)]), at: t0 + .seconds(4))
        board.renew(expiring: .seconds(3), at: t0 + .seconds(5.5))
        #expect(board.others(of: user, seenBy: "s1").values.map(\.name) == ["bob"])

        // Nobody any more on d2: the user is open nowhere.
        board.receive(.holders(daemon: "d2", user: user, []), at: t0 + .seconds(6))
        #expect(board.others(of: user, seenBy: "s1").isEmpty)
        #expect(board.openElsewhere(seenBy: "s1").isEmpty)

        // `gone` takes away everything of that daemon, and only of it.
        board.receive(.holders(daemon: "d2", user: user, [PresenceHolder(name: "bob", editing: false)]), at: t0 + .seconds(7))
        board.receive(.holders(daemon: "d2", user: other, [PresenceHolder(name: "bob", editing: false)]), at: t0 + .seconds(7))
        board.receive(.holders(daemon: "d3", user: other, [PresenceHolder(name: "carol", editing: false)]), at: t0 + .seconds(7))
        board.receive(.gone(daemon: "d2"), at: t0 + .seconds(8))
        #expect(board.openElsewhere(seenBy: "s1") == [other])
        #expect(board.others(of: other, seenBy: "s1").values.map(\.name) == ["carol"])
    }

    @Test func localChangesLeaveCoalescedAfterGoneAndAreRenewedUntilTheGoodbye() async {
        let (board, relay) = shared()
        #expect(board.takeOutgoing() == [.gone(daemon: "here")], "a new daemon first drops what an earlier one said")
        board.receive(.ask(daemon: "here"))  // the relay connected
        #expect(board.takeOutgoing() == [.ask(daemon: "here")])

        // Two sessions of alice: one person, editing if either is; announced once, as it is now.
        board.set("s1", (user, PresenceHolder(name: "alice", editing: false)))
        board.set("s2", (user, PresenceHolder(name: "alice", editing: true)))
        #expect(relay.wakes.withLock { $0 } >= 1)
        let alice = [PresenceHolder(name: "alice", editing: true)]
        #expect(board.takeOutgoing() == [.holders(daemon: "here", user: user, alice)])
        // No news to the others: nothing queued.
        board.set("s1", (user, PresenceHolder(name: "alice", editing: true)))
        #expect(board.takeOutgoing() == [])
        // A session of this daemon sees no other daemon's people but its own daemon's others.
        #expect(board.others(of: user, seenBy: "s1").values.map(\.name) == ["alice"])

        // The renewal and another daemon's ask say everything again.
        board.renew(expiring: .seconds(30))
        #expect(board.takeOutgoing() == [.holders(daemon: "here", user: user, alice)])
        board.receive(.ask(daemon: "d2"))
        #expect(board.takeOutgoing() == [.holders(daemon: "here", user: user, alice)])

        board.set("s1", nil)
        board.set("s2", nil)
        #expect(board.takeOutgoing() == [.holders(daemon: "here", user: user, [])], "nobody any more")
        board.renew(expiring: .seconds(30))
        #expect(board.takeOutgoing() == [], "nothing held: nothing to renew")

        board.set("s1", (other, PresenceHolder(name: "alice", editing: false)))
        await board.stopSharing()
        #expect(board.takeOutgoing() == [.gone(daemon: "here")], "the goodbye, in place of what was queued")
        board.set("s1", (user, PresenceHolder(name: "alice", editing: false)))
        board.renew(expiring: .seconds(30))
        #expect(board.takeOutgoing() == [], "nothing after the goodbye")
    }

    @Test func aBoardNotSharedQueuesNothing() {
        let board = PresenceBoard()
        board.set("s1", (user, PresenceHolder(name: "alice", editing: false)))
        board.renew(expiring: .seconds(30))
        #expect(board.takeOutgoing() == [])
        #expect(board.others(of: user, seenBy: "s2").values.map(\.name) == ["alice"])
    }
}
