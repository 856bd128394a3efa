import Foundation
import Glibc
import Testing
import UserListData
import UserListDomain
import UserListPresentation
import UserListServer
import UserListWire

/// History and undo through the protocol, on a real daemon in this process: who made a change
/// (the peer's uid and login name, the client's hello name, how), the history screen pushed
/// from a user's screen with a change arriving at its top live, revert as an ordinary save, and
/// each change logged once to the journal with the actor's uid.
@Suite struct SessionHistoryTests {
    let me = getuid()

    private func firstUserID(_ client: WireTestClient) async throws -> String {
        _ = try await client.intent("list", "on_appear")
        return try #require(client.rows.first?["id"]?.stringValue)
    }

    @Test func aRenameIsRecordedWithWhoMadeItAndHowAndLoggedOnce() async throws {
        let harness = try await DaemonHarness(sampleUsers: 5)
        let client = try harness.client()
        _ = try await client.hello(key: "history-a")
        let id = try await firstUserID(client)
        let renamed = try await client.intent("session", "rename_user", ["id": .string(id), "name": "Renamed By Command"])
        #expect(renamed.outcome.isSuccess, "\(renamed.outcome)")

        let reply = try await client.intent("session", "history", ["user_id": .string(id)])
        guard case .success(let result?) = reply.outcome else { Issue.record("\(reply.outcome)"); return }
        let entries = try #require(result["entries"]?.arrayValue)
        let entry = try #require(entries.first?.objectValue)
        #expect(entry["kind"] == "saved")
        #expect(entry["via"] == "command")
        #expect(entry["uid"]?.int64Value == Int64(me))
        #expect(entry["user"]?.stringValue == SessionTestNames.login(me))
        #expect(entry["after"]?["name"] == "Renamed By Command")
        #expect(entry["before"]?["name"]?.stringValue != "Renamed By Command")
        #expect(entry["at"]?.stringValue?.hasSuffix("Z") == true)

        let logged = harness.logger.entries.filter { $0.fields["USERLISTD_USER_ID"] == id }
        #expect(logged.count == 1)
        #expect(logged.first?.fields["USERLISTD_ACTOR_UID"] == String(me))
        #expect(logged.first?.fields["USERLISTD_CHANGE"] == "saved")
        await harness.stop()
    }

    /// A second terminal attaching to a session under another client name: the session's saves
    /// are recorded with the name of the client that attached last, on a screen already open too.
    @Test func aSaveIsRecordedWithTheNameOfTheClientThatAttachedLast() async throws {
        let harness = try await DaemonHarness(sampleUsers: 5)
        let first = try harness.client()
        _ = try await first.hello(key: "history-renamed", client: "userctl 1.0")
        let id = try await firstUserID(first)
        _ = try await first.intent("session", "open_user", ["id": .string(id)])
        let second = try harness.client()
        #expect(try await second.hello(key: "history-renamed", client: "userctl 1.1").resumed)
        _ = try await second.intent("detail", "set_draft_name", ["name": "Saved By The Second"])
        let saved = try await second.intent("detail", "save")
        #expect(saved.outcome.isSuccess, "\(saved.outcome)")
        let reply = try await second.intent("session", "history", ["user_id": .string(id), "limit": 1])
        guard case .success(let result?) = reply.outcome else { Issue.record("\(reply.outcome)"); return }
        let entry = try #require(result["entries"]?.arrayValue?.first)
        #expect(entry["after"]?["name"] == "Saved By The Second")
        #expect(entry["client"] == "userctl 1.1", "the save's history entry: \(entry)")
        await harness.stop()
    }

    @Test func theHistoryScreenShowsAChangeFromAnotherTerminalAtItsTopAndRevertUndoesIt() async throws {
        let harness = try await DaemonHarness(sampleUsers: 5)
        let alice = try harness.client()
        _ = try await alice.hello(key: "history-alice")
        let id = try await firstUserID(alice)
        _ = try await alice.intent("session", "open_user", ["id": .string(id)])
        let opened = try await alice.intent("detail", "open_history")
        #expect(opened.outcome.isSuccess, "\(opened.outcome)")
        #expect(alice.screens.last?["kind"] == "history")

        let bob = try harness.client()
        _ = try await bob.hello(key: "history-bob")
        _ = try await bob.intent("session", "rename_user", ["id": .string(id), "name": "Changed Elsewhere"])
        try await alice.waitForState("the rename at the top of the history") { document in
            let entries = document["screens"]?.arrayValue?.last?["state"]?["entries"]?.arrayValue
            return entries?.first?["after"]?["name"] == "Changed Elsewhere"
        }
        let top = try #require(alice.screens.last?["state"]?["entries"]?.arrayValue?.first?["entry"]?.int64Value)

        let reverted = try await alice.intent("history", "revert", ["entry": .int(top)])
        guard case .success(let result?) = reverted.outcome else { Issue.record("\(reverted.outcome)"); return }
        let restoredName = try #require(result["user"]?["name"]?.stringValue)
        #expect(restoredName != "Changed Elsewhere")
        try await alice.waitForState("the undo at the top, as its own entry") { document in
            let entries = document["screens"]?.arrayValue?.last?["state"]?["entries"]?.arrayValue
            return entries?.first?["reverts"]?.int64Value == top && entries?.first?["via"] == "intent"
        }
        // The same entry again: undone already (issue 46 item 5), not a conflict to retry.
        let again = try await alice.intent("history", "revert", ["entry": .int(top)])
        guard case .failure(let error) = again.outcome else { Issue.record("a second revert of one entry succeeded"); return }
        #expect(error.code == .validation)
        #expect(error.message.contains("Entry \(top) is already undone"), "\(error.message)")
        await harness.stop()
    }

    /// `userctl revert` of a change the user has moved past says who moved it, what and when,
    /// not "someone else saved this user first" (which a person reads as another person).
    @Test func aRevertOfAChangeSinceOvertakenSaysWhatCameAfterIt() async throws {
        let harness = try await DaemonHarness(sampleUsers: 3)
        let client = try harness.client()
        _ = try await client.hello(key: "history-overtaken")
        let id = try await firstUserID(client)
        _ = try await client.intent("session", "rename_user", ["id": .string(id), "name": "First"])
        let page = try await client.intent("session", "history", ["user_id": .string(id), "limit": 1])
        guard case .success(let result?) = page.outcome,
              let entry = result["entries"]?.arrayValue?.first?["entry"]?.int64Value else {
            Issue.record("\(page.outcome)")
            return
        }
        _ = try await client.intent("session", "rename_user", ["id": .string(id), "name": "Later"])
        let revert = try await client.intent("session", "revert", ["entry": .int(entry)])
        guard case .failure(let error) = revert.outcome else { Issue.record("\(revert.outcome)"); return }
        #expect(error.code == .conflict)
        #expect(error.message.hasPrefix("Entry \(entry) was not undone: since it, ")
                && error.message.contains("changed the name to “Later”"), "\(error.message)")
        await harness.stop()
    }

    @Test func historyFiltersByActorAndTimeAndRefusesABadTime() async throws {
        let harness = try await DaemonHarness(sampleUsers: 3)
        let client = try harness.client()
        _ = try await client.hello(key: "history-filters")
        let id = try await firstUserID(client)
        _ = try await client.intent("session", "rename_user", ["id": .string(id), "name": "One"])
        let mine = try await client.intent("session", "history", ["by_uid": .int(Int64(me)), "since": "2000-01-01T00:00:00Z"])
        guard case .success(let result?) = mine.outcome else { Issue.record("\(mine.outcome)"); return }
        #expect(result["entries"]?.arrayValue?.count == 1)
        let nobody = try await client.intent("session", "history", ["by_uid": .int(Int64(me) + 1)])
        guard case .success(let none?) = nobody.outcome else { Issue.record("\(nobody.outcome)"); return }
        #expect(none["entries"]?.arrayValue?.isEmpty == true)
        let bad = try await client.intent("session", "history", ["since": "yesterday"])
        guard case .failure(let error) = bad.outcome else { Issue.record("'yesterday' was taken as a time"); return }
        #expect(error.code == .invalidArgs)
        await harness.stop()
    }

    @Test func aReadOnlySessionReadsHistoryButCannotRevert() async throws {
        let directory = NSTemporaryDirectory() + "userlistd-history-ro-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let repository = try SQLiteUserRepository(path: directory + "/users.sqlite3")
        let user = try await repository.add(NewUser(name: "Grace", email: "grace@example.com"),
                                            by: ChangeAuthor(uid: 1001, userName: "alice", via: .intent))
        let feed = try SQLiteChangeFeed(observing: repository)
        let session = Session(key: SessionKey(uid: 1002, clientKey: "ro"), loop: TestLoops.first, canWrite: { false },
                              useCases: UserUseCases(repository: repository, history: repository),
                              changes: ChangeBroadcaster(feed: feed, loops: TestLoops.group.loops),
                              logger: Logger(sink: .memory, level: .debug))
        let client = WriteAccessTests.RecordingClient()
        await session.attach(client)
        func run(_ id: Int, _ action: String, _ args: [String: JSONValue]) async throws -> ServerMessage.Reply {
            await session.handle(.init(id: id, screen: "session", action: action, args: args), from: client)
            return try await client.awaitReply(id)
        }
        let read = try await run(1, "history", ["user_id": .string(user.id.uuidString)])
        guard case .success(let result?) = read.outcome else { Issue.record("\(read.outcome)"); return }
        let entry = try #require(result["entries"]?.arrayValue?.first?["entry"]?.int64Value)
        #expect(result["entries"]?.arrayValue?.first?["user"] == "alice")
        let revert = try await run(2, "revert", ["entry": .int(entry)])
        guard case .failure(let error) = revert.outcome else { Issue.record("a read-only session reverted"); return }
        #expect(error.code == .readOnly)
        #expect(try await repository.fetchUser(id: user.id).name == "Grace")
        _ = feed
    }
}

enum SessionTestNames {
    static func login(_ uid: uid_t) -> String? {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }
}
