import Foundation
import Testing
import UserListData
import UserListDomain
import UserListPresentation
@testable import UserListServer
import UserListWire

/// Sessions restored after a restart, before anyone comes back to them: what `userctl sessions`
/// says of them, and what the next restart saves of them.
@Suite struct RestoredSessionTests {
    static let ada = User(id: UUID(), name: "Ada", email: "ada@example.com")

    /// One session on a user's screen with a draft, one on the list (read 250 rows deep).
    static var saved: [SavedSession] {
        var detail = UserDetailState(userID: ada.id)
        detail.user = ada
        detail.draft = UserFields(name: "Ada B", email: ada.email)
        return [
            SavedSession(key: SessionKey(uid: 1000, clientKey: "on-user"), id: "on-user",
                         state: NavigationState(screens: [.list(UserListState()), .detail(detail)]),
                         detachedAt: Date(), listWindow: nil),
            SavedSession(key: SessionKey(uid: 1000, clientKey: "on-list"), id: "on-list",
                         state: NavigationState(screens: [.list(UserListState())]), detachedAt: Date(),
                         listWindow: UserListWindow(rows: 250, fromEnd: false)),
        ]
    }

    /// A registry over a fresh store in a directory of its own (`prepare` fills the store and
    /// says what to restore); `body` runs while it lives.
    func withRestored(_ prepare: (SQLiteUserRepository, String) async throws -> [SavedSession] = { _, _ in saved },
                      _ body: (SessionRegistry) async throws -> Void) async throws {
        let directory = NSTemporaryDirectory() + "userlistd-restored-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let repository = try SQLiteUserRepository(path: directory + "/users.sqlite3")
        let saved = try await prepare(repository, directory)
        let feed = try SQLiteChangeFeed(observing: repository)
        let config = DaemonConfig(socketPath: directory + "/s", databasePath: directory + "/users.sqlite3",
                                  stateDirectory: directory)
        let registry = SessionRegistry(useCases: UserUseCases(repository: repository, history: repository), feed: feed,
                                       loops: TestLoops.group, logger: Logger(sink: .memory, level: .error),
                                       config: config, isWriter: { _ in true })
        #expect(registry.restore(saved) == saved.count)
        try await body(registry)
        _ = feed
    }

    /// They report the screen they are on (it said "list" for every restored session) and the
    /// draft being kept for their person.
    @Test func aRestoredSessionReportsTheScreenItIsOnAndItsDraft() async throws {
        try await withRestored { registry in
            let rows = Introspection(startedAt: .now, storeDescription: "test", version: "0")
                .sessions(registry: registry).arrayValue ?? []
            let onUser = try #require(rows.first { $0["key"] == "on-user" })
            #expect(onUser["screen"] == "user" && onUser["draft"] == .bool(true))
            #expect(onUser["user_open"]?.stringValue == UUIDText.lowercase(Self.ada.id))
            let onList = try #require(rows.first { $0["key"] == "on-list" })
            #expect(onList["screen"] == "list" && onList["draft"] == .bool(false) && onList["user_open"] == .null)
        }
    }

    /// The next restart (or handover) saves what they were restored from: a second restart
    /// before their person came back lost the screens and the draft.
    @Test func aSecondRestartSavesWhatItWasRestoredFrom() async throws {
        try await withRestored { registry in
            var checked = 0
            for session in registry.allSessions {
                let id = await session.id
                guard let expected = Self.saved.first(where: { $0.id == id }) else { continue }
                let saved = await session.saved
                #expect(saved.state == expected.state && saved.listWindow == expected.listWindow, "\(id)")
                #expect(await session.saved.state == expected.state)
                checked += 1
            }
            #expect(checked == 2)
        }
    }

    /// A restored session's save says which client made it: the name from the hello of the
    /// client that came back to it (the attaching client's, a newer build here), as `userctl
    /// history --json` shows it. It was recorded with `"client": null`.
    @Test func aRestoredSessionsSaveIsRecordedWithTheReattachingClientsName() async throws {
        let daemon = try await DaemonHarness(sampleUsers: 5)
        let before = try daemon.client()
        _ = try await before.hello(key: "restored-writer", client: "userctl 1.0")
        try await before.waitForState("rows") { _ in before.rows.count == 5 }
        try await before.intent("list", "did_select_row", ["index": 0])
        try await before.intent("detail", "set_draft_name", ["name": "Kept Across The Restart"])
        #expect(await daemon.stop() == 0)

        try await daemon.start()
        let after = try daemon.client()
        #expect(try await after.hello(key: "restored-writer", client: "userctl 1.1").resumed)
        let saved = try await after.intent("detail", "save")
        #expect(saved.outcome.isSuccess, "\(saved.outcome)")
        let id = try #require(after.detailState?["user_id"]?.stringValue)
        let history = try await after.intent("session", "history", ["user_id": .string(id), "limit": 1])
        guard case .success(let result?) = history.outcome else { Issue.record("\(history.outcome)"); return }
        let entry = try #require(result["entries"]?.arrayValue?.first)
        #expect(entry["after"]?["name"] == "Kept Across The Restart")
        #expect(entry["client"] == "userctl 1.1", "the save's history entry: \(entry)")
        await daemon.stop()
    }

    /// After a crash the session comes back from its journal with the name of the client its
    /// writes were recorded with: a save before any client names itself again (an attach
    /// without a hello, as a handed-over connection's) still says which client made it.
    @Test func theJournalKeepsTheClientNameARestoredSessionsSaveIsRecordedWith() async throws {
        var ada: User?
        try await withRestored({ repository, directory in
            let stored = try await repository.add(NewUser(name: "Ada", email: "ada@example.com"), by: .unattributed)
            ada = stored
            var detail = UserDetailState(userID: stored.id)
            detail.user = stored
            detail.draft = UserFields(name: "Ada From The Journal", email: stored.email)
            let logger = Logger(sink: .memory, level: .error)
            let journal = SessionJournal(directory: directory, interval: .milliseconds(1), logger: logger)
            journal.start(with: [])
            journal.record(key: SessionKey(uid: 1000, clientKey: "crashed"), id: "crashed",
                           state: NavigationState(screens: [.list(UserListState()), .detail(detail)]),
                           client: "userctl tui")
            journal.finish()  // what a kill -9 leaves behind: the journal, no sessions.json
            return try #require(SessionJournal.load(directory: directory, logger: logger))
        }) { registry in
            let session = try #require(registry.allSessions.first)
            let id = UUIDText.lowercase(try #require(ada).id)
            let client = WriteAccessTests.RecordingClient()
            await session.attach(client)
            await session.handle(.init(id: 1, screen: "detail", action: "save", args: nil), from: client)
            let saved = try await client.awaitReply(1)
            #expect(saved.outcome.isSuccess, "\(saved.outcome)")
            await session.handle(.init(id: 2, screen: "session", action: "history", args: ["user_id": .string(id)]),
                                 from: client)
            let history = try await client.awaitReply(2)
            guard case .success(let result?) = history.outcome else { Issue.record("\(history.outcome)"); return }
            let entry = try #require(result["entries"]?.arrayValue?.first)
            #expect(entry["after"]?["name"] == "Ada From The Journal")
            #expect(entry["client"] == "userctl tui", "the save's history entry: \(entry)")
        }
    }
}
