import Foundation
import Testing
import UserListData
import UserListDomain
import UserListPresentation
import UserListServer
import UserListWire

/// Who else has a user open (PROTOCOL.md §3.5), between sessions of one daemon over a real
/// SQLite store: B's document shows A when A opens the user B has open, `editing` while A's
/// draft differs, and nothing once A goes back, detaches or ends; never A's draft; the list
/// marks the row; sessions on one loop and on two.
@Suite(.timeLimit(.minutes(3))) struct PresenceTests {
    typealias Client = LoopDeliveryTests.MirroringClient

    struct People {
        let store: LoopDeliveryTests.Store
        let board = PresenceBoard()

        /// A session of `name` (its own uid), attached, its first page read.
        func session(_ name: String, uid: UInt32, on loop: EventLoop) async -> (Session, Client) {
            let author = ChangeAuthor(uid: uid, userName: name, via: .intent)
            let session = Session(key: SessionKey(uid: uid, clientKey: name), loop: loop, canWrite: { true },
                                  useCases: UserUseCases(repository: store.repository).authored(by: author),
                                  changes: store.broadcaster, logger: Logger(sink: .memory, level: .warning), presence: board)
            let client = Client(loop: loop)
            await session.attach(client)
            #expect(await client.sees { client.rows == 50 })
            return (session, client)
        }
    }

    private func intent(_ session: Session, _ client: Client, id: Int, _ screen: String, _ action: String,
                        _ args: [String: JSONValue] = [:]) async throws {
        await session.handle(.init(id: id, screen: screen, action: action, args: args), from: client)
        #expect(await client.sees { client.reply(id) != nil }, "no reply to \(action)")
        #expect(client.reply(id)?.outcome.isSuccess == true, "\(action) failed")
    }

    /// The detail screen's `present`, as the client holds it ([] when absent).
    private func present(_ client: Client) -> [JSONValue]? {
        guard let screens = client.document?["screens"]?.arrayValue, screens.count > 1 else { return nil }
        return screens[1]["state"]?["present"]?.arrayValue ?? []
    }

    private func marked(_ client: Client, _ user: User) -> Bool {
        client.document?["screens"]?.arrayValue?.first?["state"]?["open_elsewhere"]?[UUIDText.lowercase(user.id)] == .bool(true)
    }

    @Test(arguments: [false, true])
    func othersSeeWhoHasTheUserOpenAndWhoIsEditingIt(twoLoops: Bool) async throws {
        let store = try await LoopDeliveryTests.Store(users: 60)
        defer { store.remove() }
        let people = People(store: store)
        let loops = TestLoops.group.loops
        let (a, alice) = await people.session("alice", uid: 2001, on: loops[0])
        let (b, bob) = await people.session("bob", uid: 2002, on: twoLoops ? loops[1 % loops.count] : loops[0])
        let user = try #require(bob.document?["screens"]?[0]?["state"]?["users"]?[2]?["id"]?.stringValue)

        try await intent(b, bob, id: 1, "list", "did_select_row", ["index": 2])
        #expect(present(bob) == [], "bob alone: nobody else shown")
        #expect(await alice.sees { alice.document?["screens"]?[0]?["state"]?["open_elsewhere"]?[user] == .bool(true) },
                "alice's list marks the row bob has open")

        try await intent(a, alice, id: 1, "list", "did_select_row", ["index": 2])
        let aliceHere: [JSONValue] = [.object(["user": "alice", "editing": false])]
        #expect(await bob.sees { present(bob) == aliceHere }, "bob sees alice")
        #expect(await alice.sees { present(alice) == [.object(["user": "bob", "editing": false])] }, "alice sees bob")

        try await intent(a, alice, id: 2, "detail", "set_draft_name", ["name": "Secret Draft Text"])
        let aliceEditing: [JSONValue] = [.object(["user": "alice", "editing": true])]
        #expect(await bob.sees { present(bob) == aliceEditing }, "bob sees alice editing")
        let bobsCopy = String(decoding: try #require(bob.document).serialized(), as: UTF8.self)
        #expect(!bobsCopy.contains("Secret Draft Text"), "never another person's draft")
        #expect(bob.resyncsAsked == 0 && alice.resyncsAsked == 0, "every patch applied")

        try await intent(a, alice, id: 3, "detail", "back")
        #expect(await bob.sees { present(bob) == [] }, "alice went back: gone from bob's screen")
        #expect(bob.document?["screens"]?[1]?["state"]?["present"] == nil, "an empty presence is left out")

        try await intent(a, alice, id: 4, "list", "did_select_row", ["index": 2])
        #expect(await bob.sees { present(bob) == aliceHere }, "alice is back")
        await a.detach(alice)
        #expect(await bob.sees { present(bob) == [] }, "alice detached: gone")

        #expect(bob.resyncsAsked == 0 && alice.resyncsAsked == 0, "every patch applied")
        #expect(await b.saved.state.screens.count == 2, "bob still has the user open")
    }

    @Test func theListMarksARowOnlyWhileSomeoneElseHasItOpen() async throws {
        let store = try await LoopDeliveryTests.Store(users: 60)
        defer { store.remove() }
        let people = People(store: store)
        let loops = TestLoops.group.loops
        let (a, alice) = await people.session("alice", uid: 2001, on: loops[0])
        let (b, bob) = await people.session("bob", uid: 2002, on: loops[1 % loops.count])
        let (c, carol) = await people.session("carol", uid: 2003, on: loops[0])
        let row = try #require(alice.document?["screens"]?[0]?["state"]?["users"]?[5]?["id"]?.stringValue)
        let shown = try #require(store.users.first { UUIDText.lowercase($0.id) == row })

        try await intent(a, alice, id: 1, "list", "did_select_row", ["index": 5])
        #expect(await bob.sees { marked(bob, shown) }, "bob's list marks it")
        #expect(await carol.sees { marked(carol, shown) }, "carol's list marks it")
        #expect(!marked(alice, shown), "not marked for the one who has it open")

        try await intent(b, bob, id: 1, "list", "did_select_row", ["index": 5])
        #expect(await alice.sees { marked(alice, shown) }, "now someone else has alice's user open too")

        try await intent(a, alice, id: 2, "detail", "back")
        try await intent(b, bob, id: 2, "detail", "back")
        for client in [alice, bob, carol] {
            #expect(await client.sees { !marked(client, shown) }, "nobody has it open: no marker anywhere")
        }
        #expect(carol.document?["screens"]?[0]?["state"]?["open_elsewhere"] == nil, "an empty set is left out")
        #expect(await c.saved.state.screens.count == 1, "carol only watched")
    }

    /// Alice and bob, on two loops, with the same user open; bob's screen shows alice there.
    /// Returns alice's session, bob's client and bob's session.
    private func aliceBesideBob(_ store: LoopDeliveryTests.Store) async throws -> (Session, Client, Session) {
        let people = People(store: store)
        let loops = TestLoops.group.loops
        let (a, alice) = await people.session("alice", uid: 2001, on: loops[0])
        let (b, bob) = await people.session("bob", uid: 2002, on: loops[1 % loops.count])
        try await intent(b, bob, id: 1, "list", "did_select_row", ["index": 1])
        try await intent(a, alice, id: 1, "list", "did_select_row", ["index": 1])
        #expect(await bob.sees { present(bob)?.count == 1 })
        return (a, bob, b)
    }

    @Test func anEndedSessionLeaves() async throws {
        let store = try await LoopDeliveryTests.Store(users: 60)
        defer { store.remove() }
        let (a, bob, b) = try await aliceBesideBob(store)
        a.stopFollowingChanges()  // as its registry ends it, with its client still attached
        _ = consume a
        #expect(await bob.sees { present(bob) == [] }, "alice's session ended: gone")
        withExtendedLifetime(b) {}
    }

    /// A session that nothing holds any more (no registry, no client handler) ends too: its
    /// loop's feed, the last to hold it, lets it go at the next change it delivers.
    @Test func aSessionNothingHoldsEndsAtItsLoopsNextChange() async throws {
        let store = try await LoopDeliveryTests.Store(users: 60)
        defer { store.remove() }
        let (a, bob, b) = try await aliceBesideBob(store)
        _ = consume a  // alice's session: from here only its loop's feed holds it
        try await store.rename(40, to: "Somebody Else")  // a change for alice's loop to deliver
        #expect(await bob.sees { present(bob) == [] }, "alice's session ended at the change: gone")
        withExtendedLifetime(b) {}
    }
}

extension JSONValue {
    /// Element `index` of an array, or nil (the tests' paths into a document).
    fileprivate subscript(index: Int) -> JSONValue? {
        guard let array = arrayValue, array.indices.contains(index) else { return nil }
        return array[index]
    }
}
