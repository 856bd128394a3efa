import Foundation
import Testing
import ThreadLocks
@testable import UserListData
import UserListDomain
import UserListTestSupport

/// Two presence relays on one real PostgreSQL database, as two daemons' would be: each tells its
/// daemon it (re)connected (its own `ask`), hears the other's messages and never its own, gets a
/// crowd too big for one NOTIFY whole and in order, and says its last word before it stops.
@Suite(.serialized, .childProcesses,
       .enabled(if: PostgresTestServer.isAvailable, "PostgreSQL 15 is missing (/usr/lib/postgresql/15/bin): run scripts/setup.sh"))
struct PostgresPresenceRelayProcessTests {
    /// One daemon's side: what its relay handed it, and what it has queued to send.
    final class Side: Sendable {
        let heard = Lock<[PresenceMessage]>([])
        /// Beats after every message the relay hands this side.
        let heardOne = Pulse()
        let queued = Lock<[PresenceMessage]>([])
        let relay: PostgresPresenceRelay

        init(_ connection: PGConnectionString, daemon: String) {
            relay = PostgresPresenceRelay(connection: connection)
            relay.start(daemon: daemon, receive: { [heard, heardOne] message in
                            heard.withLock { $0.append(message) }
                            heardOne.beat()
                        },
                        outgoing: { [queued] in queued.withLock { queued in defer { queued = [] }; return queued } })
        }

        func send(_ messages: [PresenceMessage]) {
            queued.withLock { $0 += messages }
            relay.wake()
        }

        func hasHeard(_ message: PresenceMessage) -> Bool { heard.withLock { $0.contains(message) } }

        /// Waits until the relay has handed this side `message`; false only past the deadline.
        func hears(_ message: PresenceMessage) async -> Bool { await heardOne.until { hasHeard(message) } }
    }

    @Test func twoRelaysHearEachOtherNeverThemselvesAndACrowdWhole() async throws {
        let server = try PostgresTestServer.shared()
        let connection = try PGConnectionString(server.conninfo(try server.makeDatabase()))
        let one = Side(connection, daemon: "host:/one.sock"), two = Side(connection, daemon: "host:/two.sock")
        #expect(await one.hears(.ask(daemon: "host:/one.sock")), "each relay tells its own daemon it connected")
        #expect(await two.hears(.ask(daemon: "host:/two.sock")), "each relay tells its own daemon it connected")

        let user = UUID()
        let crowd = (0..<500).map { PresenceHolder(name: "person-with-a-rather-long-login-\($0)", editing: $0.isMultiple(of: 3)) }
        #expect(PresencePayload.encode(.holders(daemon: "host:/one.sock", user: user, crowd)).count > 1, "more than one NOTIFY")
        let sent: [PresenceMessage] = [.ask(daemon: "host:/one.sock"), .holders(daemon: "host:/one.sock", user: user, crowd),
                                       .holders(daemon: "host:/one.sock", user: user, [])]
        one.send(sent)
        #expect(await two.hears(sent[2]), "heard: \(two.heard.withLock { $0.count }) messages")
        #expect(two.heard.withLock { $0.filter { $0.daemon == "host:/one.sock" } } == sent, "whole, once each, in order")
        #expect(one.heard.withLock { $0 } == [.ask(daemon: "host:/one.sock")], "never its own messages")

        // Queued without a wake-up: the stop itself sends what is left.
        one.queued.withLock { $0.append(.gone(daemon: "host:/one.sock")) }
        await one.relay.stop()
        #expect(await two.hears(.gone(daemon: "host:/one.sock")), "the last word before the stop")
        await two.relay.stop()
    }
}
