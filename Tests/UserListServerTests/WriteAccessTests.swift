import Foundation
import Synchronization
import Testing
import UserListTestSupport
import UserListData
import UserListDomain
import UserListPresentation
import UserListServer
import UserListWire
import ThreadLocks

/// Write access is asked at every intent that would write, not fixed when the session was made.
@Suite struct WriteAccessTests {
    /// Collects what the session sends.
    final class RecordingClient: SessionClient {
        let messages = Lock<[ServerMessage]>([])
        /// Beats after every message the session sends.
        let received = Pulse()
        func send(_ message: ServerMessage, droppable: Bool) {
            messages.withLock { $0.append(message) }
            received.beat()
        }
        func sendFrames(_ frames: [(frame: OutgoingFrame, droppable: Bool)]) {
            for frame in frames {
                if let message = try? ServerMessage(frame: frame.frame.bytes.dropFirst(4)) { send(message, droppable: frame.droppable) }
            }
        }
        func reply(_ id: Int) -> ServerMessage.Reply? {
            messages.withLock { $0.lazy.compactMap { if case .reply(let reply) = $0, reply.id == id { reply } else { nil } }.first }
        }
        /// The reply to intent `id` once it has come; throws after the generous deadline without it.
        func awaitReply(_ id: Int) async throws -> ServerMessage.Reply {
            guard await received.until({ reply(id) != nil }), let reply = reply(id) else { throw CancellationError() }
            return reply
        }
    }

    @Test func revokingWriteAccessRefusesTheNextWriteWithoutReattaching() async throws {
        let directory = NSTemporaryDirectory() + "userlistd-access-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/users.sqlite3"
        let repository = try SQLiteUserRepository(path: path)
        _ = try await repository.importUsers(SampleUsers.generate(count: 5, seed: 3))
        let feed = try SQLiteChangeFeed(observing: repository)
        let writer = Atomic<Bool>(true)
        let session = Session(key: SessionKey(uid: 1000, clientKey: "k"), loop: TestLoops.first, canWrite: { writer.load(ordering: .relaxed) },
                              useCases: UserUseCases(repository: repository), changes: ChangeBroadcaster(feed: feed, loops: TestLoops.group.loops),
                              logger: Logger(sink: .memory, level: .debug))
        let client = RecordingClient()
        await session.attach(client)
        #expect(!session.readOnly)

        func run(_ id: Int, _ action: String, _ args: [String: JSONValue]) async throws -> ServerMessage.Reply {
            await session.handle(.init(id: id, screen: "session", action: action, args: args), from: client)
            return try await client.awaitReply(id)
        }
        let first = try await run(1, "add_user", ["name": "Allowed", "email": "allowed@example.com"])
        #expect(first.outcome.isSuccess, "\(first.outcome)")

        writer.store(false, ordering: .relaxed)  // e.g. removed from the admin group
        #expect(session.readOnly)
        let second = try await run(2, "add_user", ["name": "Refused", "email": "refused@example.com"])
        guard case .failure(let error) = second.outcome else {
            Issue.record("a write was allowed after access was revoked")
            return
        }
        #expect(error.code == .readOnly)
        // Reading is still fine.
        #expect(try await run(3, "open_user", ["id": .string(SampleUsers.generate(count: 5, seed: 3)[0].id.uuidString.lowercased())]).outcome.isSuccess)
        _ = feed
    }

    /// carol, read-only, opens a user: the screen says read-only, takes no typing (her draft
    /// stays the stored name), cannot open an empty new user, and she is never "editing".
    @Test func aReadOnlySessionsScreenSaysSoAndTakesNoEdits() async throws {
        let directory = NSTemporaryDirectory() + "userlistd-readonly-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let repository = try SQLiteUserRepository(path: directory + "/users.sqlite3")
        let users = SampleUsers.generate(count: 5, seed: 3)
        _ = try await repository.importUsers(users)
        let feed = try SQLiteChangeFeed(observing: repository)
        let session = Session(key: SessionKey(uid: 1001, clientKey: "carol"), loop: TestLoops.first, canWrite: { false },
                              useCases: UserUseCases(repository: repository),
                              changes: ChangeBroadcaster(feed: feed, loops: TestLoops.group.loops),
                              logger: Logger(sink: .memory, level: .debug))
        let client = RecordingClient()
        await session.attach(client)
        func run(_ id: Int, _ screen: String, _ action: String, _ args: [String: JSONValue] = [:]) async throws -> ServerMessage.Reply {
            await session.handle(.init(id: id, screen: screen, action: action, args: args), from: client)
            return try await client.awaitReply(id)
        }
        let id = users[0].id.uuidString.lowercased()
        #expect(try await run(1, "session", "open_user", ["id": .string(id)]).outcome.isSuccess)
        func detail() async -> UserDetailState? {
            guard case .detail(let state)? = await session.saved.state.screens.last else { return nil }
            return state
        }
        #expect(await detail()?.isReadOnly == true, "the screen says read-only")
        guard case .failure(let typed) = try await run(2, "detail", "set_draft_name", ["name": "Carol Typed"]).outcome else {
            Issue.record("a read-only screen took an edit")
            return
        }
        #expect(typed.code == .readOnly)
        #expect(await detail()?.isDirty == false, "nothing typed, so never editing")
        guard case .failure(let new) = try await run(3, "session", "open_new_user").outcome else {
            Issue.record("a read-only session opened a new user")
            return
        }
        #expect(new.code == .readOnly)
        _ = feed
    }
}
