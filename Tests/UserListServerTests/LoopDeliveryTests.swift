import Foundation
import Testing
import UserListClient
import UserListData
import UserListDomain
import UserListPresentation
import UserListServer
import UserListWire
import UserListTestSupport
import ThreadLocks

/// Each loop applies the changes its writer published to its own sessions, on its own thread
/// (`LoopChangeFeed`): every client's copy stays in step (no gap, no resync) and equal to its
/// session's state, through intents, searches and detail screens in between, and every frame
/// a session sends is sent from its loop's thread.
@Suite(.timeLimit(.minutes(3))) struct LoopDeliveryTests {
    /// Keeps the copy of the state a client keeps (`SessionMirror`, as userctl does), and
    /// counts frames sent from a thread other than its session's loop.
    final class MirroringClient: SessionClient {
        private struct Seen {
            var mirror = SessionMirror()
            var changedEvents = 0
            var resyncsAsked = 0
            var sentOffTheLoop = 0
            var replies: [Int: ServerMessage.Reply] = [:]
        }
        private let seen = Lock(Seen())
        private let loop: EventLoop
        /// Beats after every message the session sends.
        let received = Pulse()

        init(loop: EventLoop) { self.loop = loop }

        func send(_ message: ServerMessage, droppable: Bool) {
            let onLoop = loop.isLoopThread
            seen.withLock { seen in
                if !onLoop { seen.sentOffTheLoop += 1 }
                for effect in seen.mirror.receive(message) {
                    switch effect {
                    case .sendResync: seen.resyncsAsked += 1
                    case .event(let event) where event.name == "changed": seen.changedEvents += 1
                    case .reply(let reply): seen.replies[reply.id] = reply
                    default: break
                    }
                }
            }
            received.beat()
        }

        func sendFrames(_ frames: [(frame: OutgoingFrame, droppable: Bool)]) {
            for frame in frames {
                guard let message = try? ServerMessage(frame: frame.frame.bytes.dropFirst(4)) else {
                    Issue.record("the session sent a frame that does not decode")
                    continue
                }
                send(message, droppable: frame.droppable)
            }
        }

        var document: JSONValue? { seen.withLock { $0.mirror.document } }
        var changedEvents: Int { seen.withLock { $0.changedEvents } }
        var resyncsAsked: Int { seen.withLock { $0.resyncsAsked } }
        var sentOffTheLoop: Int { seen.withLock { $0.sentOffTheLoop } }
        func reply(_ id: Int) -> ServerMessage.Reply? { seen.withLock { $0.replies[id] } }
        /// Waits until `condition` (on what this client has received) holds; false after the deadline.
        func sees(_ condition: () -> Bool) async -> Bool { await received.until(condition) }

        var rows: Int { document?["screens"]?.arrayValue?.first?["state"]?["users"]?.arrayValue?.count ?? 0 }
    }

    struct Store {
        let directory: String
        let repository: SQLiteUserRepository
        let feed: SQLiteChangeFeed
        let broadcaster: ChangeBroadcaster
        let users: [User]

        init(users count: Int) async throws {
            directory = NSTemporaryDirectory() + "userlistd-following-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            repository = try SQLiteUserRepository(path: directory + "/users.sqlite3")
            users = SampleUsers.generate(count: count, seed: 11)
            _ = try await repository.importUsers(users)
            feed = try SQLiteChangeFeed(observing: repository)  // the broadcaster does not keep it
            broadcaster = ChangeBroadcaster(feed: feed, loops: TestLoops.group.loops)
        }

        func session(_ key: String, on loop: EventLoop = TestLoops.first) -> Session {
            Session(key: SessionKey(uid: 1000, clientKey: key), loop: loop, canWrite: { true },
                    useCases: UserUseCases(repository: repository), changes: broadcaster,
                    logger: Logger(sink: .memory, level: .warning))
        }

        /// Renames a user as another process or session would: a commit the feed delivers.
        func rename(_ index: Int, to name: String) async throws {
            let current = try await repository.fetchUser(id: users[index].id)
            _ = try await UserUseCases(repository: repository).update.rename(current, to: name)
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }

    private func intent(_ session: Session, _ client: MirroringClient, id: Int, _ screen: String, _ action: String,
                        _ args: [String: JSONValue] = [:]) async throws -> ServerMessage.Reply {
        await session.handle(.init(id: id, screen: screen, action: action, args: args), from: client)
        #expect(await client.sees { client.reply(id) != nil }, "no reply to \(action)")
        return try #require(client.reply(id))
    }

    /// Every client's copy equals its session's state, once `changes` changes reached it.
    private func expectInStep(_ pairs: [(Session, MirroringClient)], changes: Int, _ comment: String) async {
        for (session, client) in pairs {
            #expect(await client.sees { client.changedEvents >= changes }, "\(comment): events")
            #expect(client.changedEvents == changes, "\(comment): one changed event per change")
            let state = await session.saved.state
            #expect(client.document == StateDocument.make(state), "\(comment): the client's copy is the session's state")
            #expect(client.resyncsAsked == 0, "\(comment): no gap in the patches")
            #expect(client.sentOffTheLoop == 0, "\(comment): every frame sent from the session's loop")
        }
    }

    @Test func sessionsOnEveryLoopStayInStepThroughIntents() async throws {
        let store = try await Store(users: 120)
        defer { store.remove() }
        let loops = TestLoops.group.loops
        let first = store.session("first", on: loops[0]), second = store.session("second", on: loops[1 % loops.count])
        let searching = store.session("searching", on: loops[0])
        let a = MirroringClient(loop: first.loop), b = MirroringClient(loop: second.loop), c = MirroringClient(loop: searching.loop)
        let pairs = [(first, a), (second, b), (searching, c)]
        for (session, client) in pairs { await session.attach(client) }
        for client in [a, b, c] { #expect(await client.sees { client.rows == 50 }) }
        _ = try await intent(searching, c, id: 1, "list", "search", ["text": "a"])

        // Renames on and off the first page, some moving rows, while the sessions show lists.
        for round in 0..<12 {
            try await store.rename(round * 9 % 120, to: "Aardvark \(round)")
        }
        await expectInStep(pairs, changes: 12, "lists")

        // The sessions act again: the next page, a detail screen.
        #expect(try await intent(first, a, id: 2, "list", "did_display_row", ["index": 49]).outcome.isSuccess)
        #expect(await a.sees { a.rows > 50 })
        #expect(try await intent(second, b, id: 3, "list", "did_select_row", ["index": 2]).outcome.isSuccess)
        for round in 12..<20 {
            try await store.rename(round * 7 % 120, to: "Zebra \(round)")
        }
        await expectInStep(pairs, changes: 20, "after intents")

        // Back to the list, and more changes.
        #expect(try await intent(second, b, id: 4, "detail", "back").outcome.isSuccess)
        for round in 20..<26 {
            try await store.rename(round % 120, to: "Back Again \(round)")
        }
        await expectInStep(pairs, changes: 26, "back on the list")
    }

    @Test func aLongRunOfChangesLeavesASessionInStep() async throws {
        let store = try await Store(users: 60)
        defer { store.remove() }
        let session = store.session("idle")
        let client = MirroringClient(loop: session.loop)
        await session.attach(client)
        #expect(await client.sees { client.rows == 50 })
        let count = 3 * 32 + 5
        for index in 0..<count {
            try await store.rename(index % 60, to: "Name \(index)")
        }
        await expectInStep([(session, client)], changes: count, "after a long run")
    }
}
