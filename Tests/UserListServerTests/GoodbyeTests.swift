import Foundation
import Testing
import UserListData
import UserListDomain
import UserListPresentation
import UserListServer
import UserListWire

/// A session that said goodbye (the daemon is stopping) starts nothing more: an intent read
/// after it is neither performed nor answered, so no save can reach the store after the stop
/// finished the saves in flight and closed it.
@Suite struct GoodbyeTests {
    @Test func afterGoodbyeASessionStartsNothing() async throws {
        let directory = NSTemporaryDirectory() + "userlistd-goodbye-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let repository = try SQLiteUserRepository(path: directory + "/users.sqlite3")
        let users = SampleUsers.generate(count: 5, seed: 4)
        _ = try await repository.importUsers(users)
        let feed = try SQLiteChangeFeed(observing: repository)
        let session = Session(key: SessionKey(uid: 1000, clientKey: "bye"), loop: TestLoops.first, canWrite: { true },
                              useCases: UserUseCases(repository: repository), changes: ChangeBroadcaster(feed: feed, loops: TestLoops.group.loops),
                              logger: Logger(sink: .memory, level: .debug))
        let client = WriteAccessTests.RecordingClient()
        await session.attach(client)
        let id = users[0].id
        func run(_ number: Int, _ screen: String, _ action: String, _ args: [String: JSONValue]? = nil) async {
            await session.handle(.init(id: number, screen: screen, action: action, args: args), from: client)
        }
        await run(1, "session", "open_user", ["id": .string(id.uuidString.lowercased())])
        #expect(try await client.awaitReply(1).outcome.isSuccess)
        await run(2, "detail", "set_draft_name", ["name": "Typed Before Goodbye"])
        #expect(try await client.awaitReply(2).outcome.isSuccess)

        await session.sayGoodbye(reason: "shutting_down")
        await run(3, "detail", "save")
        await run(4, "detail", "set_draft_name", ["name": "Typed After Goodbye"])
        await session.finishInFlightWork()  // a save begun would be finished here

        #expect(client.reply(3) == nil && client.reply(4) == nil, "no reply after goodbye")
        #expect(try await repository.fetchUser(id: id).name == users[0].name, "the save was not performed")
        _ = feed
    }
}
