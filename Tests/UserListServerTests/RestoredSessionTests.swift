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

    /// A registry over a fresh store that has restored `saved`; `body` runs while it lives.
    func withRestored(_ body: (SessionRegistry) async throws -> Void) async throws {
        let directory = NSTemporaryDirectory() + "userlistd-restored-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let repository = try SQLiteUserRepository(path: directory + "/users.sqlite3")
        let feed = try SQLiteChangeFeed(observing: repository)
        let config = DaemonConfig(socketPath: directory + "/s", databasePath: directory + "/users.sqlite3",
                                  stateDirectory: directory)
        let registry = SessionRegistry(useCases: UserUseCases(repository: repository), feed: feed,
                                       loops: TestLoops.group, logger: Logger(sink: .memory, level: .error),
                                       config: config, isWriter: { _ in true })
        #expect(registry.restore(Self.saved) == 2)
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
                #expect(await session.savedState == expected.state)
                checked += 1
            }
            #expect(checked == 2)
        }
    }
}
