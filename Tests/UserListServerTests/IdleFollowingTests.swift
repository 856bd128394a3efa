import Foundation
import Testing
import UserListClient
import UserListData
import UserListDomain
import UserListPresentation
import UserListServer
import UserListWire
import ThreadLocks

/// Sessions that only show their list get others' changes straight from the broadcaster's
/// thread (`SessionFeed`); their ViewModels catch up when the session next runs. Whatever path a
/// change takes, each client's copy stays in step (no gap, no resync) and equal to the
/// session's own state, through intents, searches and detail screens in between.
@Suite(.timeLimit(.minutes(3))) struct IdleFollowingTests {
    /// Keeps the copy of the state a client keeps (`SessionMirror`, as userctl does).
    final class MirroringClient: SessionClient {
        private struct Seen {
            var mirror = SessionMirror()
            var changedEvents = 0
            var resyncsAsked = 0
            var replies: [Int: ServerMessage.Reply] = [:]
        }
        private let seen = Lock(Seen())

        func send(_ message: ServerMessage, droppable: Bool) {
            seen.withLock { seen in
                for effect in seen.mirror.receive(message) {
                    switch effect {
                    case .sendResync: seen.resyncsAsked += 1
                    case .event(let event) where event.name == "changed": seen.changedEvents += 1
                    case .reply(let reply): seen.replies[reply.id] = reply
                    default: break
                    }
                }
            }
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
        func reply(_ id: Int) -> ServerMessage.Reply? { seen.withLock { $0.replies[id] } }
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
            broadcaster = ChangeBroadcaster(feed: feed)
        }

        func session(_ key: String) -> Session {
            Session(key: SessionKey(uid: 1000, clientKey: key), canWrite: { true },
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
        #expect(await LifecycleTests.eventually { client.reply(id) != nil }, "no reply to \(action)")
        return try #require(client.reply(id))
    }

    /// Every client's copy equals its session's state, once `changes` changes reached it.
    private func expectInStep(_ pairs: [(Session, MirroringClient)], changes: Int, _ comment: String) async {
        for (session, client) in pairs {
            #expect(await LifecycleTests.eventually { client.changedEvents >= changes }, "\(comment): events")
            #expect(client.changedEvents == changes, "\(comment): one changed event per change")
            let state = await session.savedState
            #expect(client.document == StateDocument.make(state), "\(comment): the client's copy is the session's state")
            #expect(client.resyncsAsked == 0, "\(comment): no gap in the patches")
        }
    }

    @Test func idleListsAreSentChangesByTheBroadcasterAndStayInStepThroughIntents() async throws {
        let store = try await Store(users: 120)
        defer { store.remove() }
        let first = store.session("first"), second = store.session("second"), searching = store.session("searching")
        let a = MirroringClient(), b = MirroringClient(), c = MirroringClient()
        let pairs = [(first, a), (second, b), (searching, c)]
        for (session, client) in pairs { await session.attach(client) }
        #expect(await LifecycleTests.eventually { a.rows == 50 && b.rows == 50 && c.rows == 50 })
        _ = try await intent(searching, c, id: 1, "list", "search", ["text": "a"])

        // Renames on and off the first page, some moving rows, while the sessions are idle.
        for round in 0..<12 {
            try await store.rename(round * 9 % 120, to: "Aardvark \(round)")
        }
        await expectInStep(pairs, changes: 12, "idle")
        #expect(await first.changesSentWhileIdle > 0, "an idle list was sent changes by the broadcaster")
        #expect(await second.changesSentWhileIdle > 0)

        // The sessions act again: the next page, a detail screen (not idle: its own path).
        #expect(try await intent(first, a, id: 2, "list", "did_display_row", ["index": 49]).outcome.isSuccess)
        #expect(await LifecycleTests.eventually { a.rows > 50 })
        #expect(try await intent(second, b, id: 3, "list", "did_select_row", ["index": 2]).outcome.isSuccess)
        let sentBefore = await second.changesSentWhileIdle
        for round in 12..<20 {
            try await store.rename(round * 7 % 120, to: "Zebra \(round)")
        }
        await expectInStep(pairs, changes: 20, "after intents")
        #expect(await second.changesSentWhileIdle == sentBefore, "a session showing a detail screen applies changes itself")

        // Back to the list: idle again once its reload (if any) lands, and it follows from the
        // broadcaster once more. Renamed until it does (no guess at when the reload lands).
        #expect(try await intent(second, b, id: 4, "detail", "back").outcome.isSuccess)
        var changes = 20
        while await second.changesSentWhileIdle == sentBefore, changes < 200 {
            changes += 1
            try await store.rename(changes % 120, to: "Back Again \(changes)")
            await expectInStep(pairs, changes: changes, "back on the list")
        }
        #expect(await second.changesSentWhileIdle > sentBefore)
    }

    @Test func aLongRunOfChangesLeavesAnIdleSessionInStep() async throws {
        let store = try await Store(users: 60)
        defer { store.remove() }
        let session = store.session("idle")
        let client = MirroringClient()
        await session.attach(client)
        #expect(await LifecycleTests.eventually { client.rows == 50 })
        let count = 3 * 32 + 5
        for index in 0..<count {
            try await store.rename(index % 60, to: "Name \(index)")
        }
        await expectInStep([(session, client)], changes: count, "after a long run")
        #expect(await session.changesSentWhileIdle > 0)
    }
}
