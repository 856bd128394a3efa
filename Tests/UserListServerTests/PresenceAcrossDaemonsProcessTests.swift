import Foundation
import Glibc
import Testing
import UserListClient
import UserListTestSupport
import UserListWire

/// Presence shared by two real daemons on one real PostgreSQL database (PROTOCOL.md §5.1), as
/// two people on two hosts would see it: a client of daemon 2 with a user open sees the person
/// who opened it through daemon 1 in `present`, editing while they type (never their text), and
/// no more once they leave, once daemon 1 stops, or, after it was killed, once its announcements
/// expire. Every wait is for what the client's document shows, with a generous deadline.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(4)),
       .enabled(if: PostgresTestServer.isAvailable, "PostgreSQL 15 is missing (/usr/lib/postgresql/15/bin): run scripts/setup.sh"),
       .enabled(if: RealDaemon.skipReason == nil, "userlistd is not built: run 'swift build' before 'swift test'"))
struct PresenceAcrossDaemonsProcessTests {
    /// The login name both daemons show for the uid running the tests.
    static var loginName: String {
        guard let entry = getpwuid(getuid()), let name = entry.pointee.pw_name else { return "uid \(getuid())" }
        return String(cString: name)
    }

    /// A daemon on `database`, re-announcing its presence every `interval` seconds.
    func daemon(_ server: PostgresTestServer, _ database: String, sampleData: Int = 0, interval: String) throws -> RealDaemon {
        try RealDaemon(sampleData: sampleData, extraArguments: ["--database", server.conninfo(database), "--presence-interval", interval])
    }

    func connect(_ daemon: RealDaemon, _ key: String) throws -> UserListClient {
        var configuration = ClientConfiguration(socketPath: daemon.socketPath, sessionKey: key + "-" + UUID().uuidString.prefix(6),
                                                clientName: "tests")
        configuration.replyTimeout = .seconds(60)
        let client = UserListClient(configuration: configuration)
        try client.connect()
        return client
    }

    /// Opens the first user of the list on `client`'s session; returns its id.
    @discardableResult
    func openFirstUser(_ client: UserListClient) async throws -> String {
        #expect(await client.sees { SessionDocument(client.document).list?.users.isEmpty == false })
        let id = try #require(SessionDocument(client.document).list?.users.first?.id)
        try await client.send(screen: "session", action: "open_user", args: ["id": .string(id)])
        #expect(await client.sees { SessionDocument(client.document).detail?.user?.id == id })
        return id
    }

    /// The detail screen's `present` as `client` holds it, as (name, editing) pairs.
    func present(_ client: UserListClient) -> [String] {
        (SessionDocument(client.document).detail?.present ?? []).map { "\($0.user) editing=\($0.editing)" }
    }

    @Test func aClientOnTheOtherDaemonSeesWhoIsEditingAndThemGoIncludingAfterAKill9() async throws {
        let server = try PostgresTestServer.shared()
        let database = try server.makeDatabase()
        // Re-announced every second, so daemon 1's people expire 3 to 4 s after the kill (and a
        // busy machine delaying a renewal by 3 s is all it would take to make them flicker).
        let one = try daemon(server, database, sampleData: 20, interval: "1")
        defer { one.tearDown() }
        let two = try daemon(server, database, interval: "1")
        defer { two.tearDown() }
        let me = Self.loginName

        let bob = try connect(two, "bob")
        defer { bob.close() }
        let user = try await openFirstUser(bob)
        #expect(present(bob) == [], "alone on the user: nobody shown")

        let alice = try connect(one, "alice")
        defer { alice.close() }
        try await openFirstUser(alice)
        #expect(await bob.sees { present(bob) == ["\(me) editing=false"] },
                "bob sees alice arrive: \(present(bob))\n\(two.log())")
        #expect(await alice.sees { present(alice) == ["\(me) editing=false"] }, "and alice sees bob: \(present(alice))")

        try await alice.send(screen: "detail", action: "set_draft_name", args: ["name": "Secret Draft Zqxj"])
        #expect(await bob.sees { present(bob) == ["\(me) editing=true"] }, "bob sees alice editing: \(present(bob))")
        let bobsCopy = String(decoding: try #require(bob.document).serialized(), as: UTF8.self)
        #expect(!bobsCopy.contains("Zqxj"), "never another person's draft")

        try await alice.send(screen: "detail", action: "back")
        #expect(await bob.sees { present(bob) == [] }, "alice left: gone from bob's screen: \(present(bob))")
        #expect(bob.document?["screens"]?.arrayValue?.last?["state"]?["present"] == nil, "an empty presence is left out")
        #expect(await alice.sees { SessionDocument(alice.document).list?.openElsewhere.contains(user) == true },
                "alice's list marks the row bob has open on the other daemon")

        // Alice opens it again and types; then daemon 1 dies without a word.
        try await alice.send(screen: "session", action: "open_user", args: ["id": .string(user)])
        try await alice.send(screen: "detail", action: "set_draft_name", args: ["name": "Another Draft"])
        #expect(await bob.sees { present(bob) == ["\(me) editing=true"] }, "bob sees alice again: \(present(bob))")
        one.kill9()
        #expect(await bob.sees { present(bob) == [] },
                "daemon 1's people expire once it stops re-announcing them: \(present(bob))\n\(two.log())")
        #expect(bob.resyncCount == 0, "every patch applied")
    }

    /// With an interval far longer than the test's deadline (nothing expires meanwhile): a daemon
    /// started after someone opened a user hears of them (it asks at start), and one stopping
    /// cleanly takes its people away at once (`gone`).
    @Test func aLateDaemonAsksAndAStoppingOneSaysGoodbye() async throws {
        let server = try PostgresTestServer.shared()
        let database = try server.makeDatabase()
        let one = try daemon(server, database, sampleData: 20, interval: "600")
        defer { one.tearDown() }
        let me = Self.loginName
        let alice = try connect(one, "alice")
        defer { alice.close() }
        try await openFirstUser(alice)
        try await alice.send(screen: "detail", action: "set_draft_name", args: ["name": "Typed Before"])

        let two = try daemon(server, database, interval: "600")
        defer { two.tearDown() }
        let bob = try connect(two, "bob")
        defer { bob.close() }
        try await openFirstUser(bob)
        #expect(await bob.sees { present(bob) == ["\(me) editing=true"] },
                "the late daemon heard of alice: \(present(bob))\n\(two.log())")

        one.stop()  // alice still has the user open: only `gone` takes her away within the deadline
        #expect(await bob.sees { present(bob) == [] },
                "daemon 1 stopped: its people went with it: \(present(bob))\n\(two.log())")
    }
}
