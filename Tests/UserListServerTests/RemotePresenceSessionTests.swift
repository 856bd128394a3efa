import Foundation
import Testing
import UserListDomain
import UserListPresentation
@testable import UserListServer
import UserListWire

/// Another daemon's people reach sessions' documents as this daemon's do, handed to the board
/// on a thread that is no loop (the relay's): the detail's `present` lists them, every list marks
/// the users they hold, and their daemon's `gone` takes them away; in-process, so `make tsan`
/// sees the hand-over from that thread to the loops.
@Suite(.timeLimit(.minutes(3))) struct RemotePresenceSessionTests {
    typealias Client = LoopDeliveryTests.MirroringClient

    /// `message` handed to the board from a thread of its own, as the relay's thread does.
    func receiveOnAnotherThread(_ board: PresenceBoard, _ message: PresenceMessage) {
        let thread = Thread { board.receive(message) }
        thread.start()
    }

    func select(_ session: Session, _ client: Client, row: Int) async {
        await session.handle(.init(id: 1, screen: "list", action: "did_select_row", args: ["index": .int(Int64(row))]), from: client)
        #expect(await client.sees { client.reply(1) != nil }, "no reply")
    }

    func present(_ client: Client) -> [JSONValue] {
        client.document?["screens"]?.arrayValue?.last?["state"]?["present"]?.arrayValue ?? []
    }

    func marked(_ client: Client, _ id: String) -> Bool {
        client.document?["screens"]?.arrayValue?.first?["state"]?["open_elsewhere"]?[id] == .bool(true)
    }

    func row(_ client: Client, _ index: Int) -> String? {
        client.document?["screens"]?.arrayValue?.first?["state"]?["users"]?.arrayValue?[index]["id"]?.stringValue
    }

    @Test func anotherDaemonsPeopleAreShownAndGoWithTheirDaemon() async throws {
        let store = try await LoopDeliveryTests.Store(users: 60)
        defer { store.remove() }
        let people = PresenceTests.People(store: store)
        people.board.share(through: SharedPresenceBoardTests.FakeRelay(), daemon: "here")
        let loops = TestLoops.group.loops
        let (b, bob) = await people.session("bob", uid: 2002, on: loops[0])
        let (a, alice) = await people.session("alice", uid: 2001, on: loops[1 % loops.count])
        defer { withExtendedLifetime((a, b)) {} }  // a session let go leaves the board
        let shown = try #require(row(bob, 2)), elsewhere = try #require(row(bob, 5))
        await select(b, bob, row: 2)
        #expect(await alice.sees { marked(alice, shown) }, "alice's list marks bob's user")

        receiveOnAnotherThread(people.board, .holders(daemon: "d2", user: try #require(UUIDText.parse(shown)),
                                                      [PresenceHolder(name: "carol", editing: true)]))
        receiveOnAnotherThread(people.board, .holders(daemon: "d2", user: try #require(UUIDText.parse(elsewhere)),
                                                      [PresenceHolder(name: "dave", editing: false)]))
        #expect(await bob.sees { present(bob) == [.object(["user": "carol", "editing": true])] },
                "bob sees carol, on the other daemon, editing: \(present(bob))")
        #expect(await alice.sees { marked(alice, shown) && marked(alice, elsewhere) },
                "alice's list marks what the other daemon has open")
        #expect(await bob.sees { marked(bob, elsewhere) }, "bob's list marks what the other daemon has open")

        receiveOnAnotherThread(people.board, .gone(daemon: "d2"))
        #expect(await bob.sees { present(bob).isEmpty && !marked(bob, elsewhere) },
                "the other daemon stopped: its people are gone from bob's screens")
        #expect(await alice.sees { !marked(alice, elsewhere) }, "the other daemon stopped: gone from alice's list")
        #expect(marked(alice, shown), "bob, here, still has his user open")
        #expect(bob.resyncsAsked == 0 && alice.resyncsAsked == 0, "every patch applied")
    }
}
