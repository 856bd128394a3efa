import Foundation
import Testing
import UserListData
import UserListDomain
import UserListPresentation
@testable import UserListServer
import UserListWire

/// The `sessions` reply is paged so that no reply can outgrow a frame, however many sessions exist.
@Suite struct IntrospectionLimitTests {
    @Test func aLongListIsCutWithAMarkerAndContinuesAfterIt() throws {
        let directory = NSTemporaryDirectory() + "userlistd-introspection-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let repository = try SQLiteUserRepository(path: directory + "/users.sqlite3")
        let feed = try SQLiteChangeFeed(observing: repository)
        var config = DaemonConfig(socketPath: directory + "/s", databasePath: directory + "/users.sqlite3", stateDirectory: directory)
        config.maxSessionsPerUID = 100
        let registry = SessionRegistry(useCases: UserUseCases(repository: repository), feed: feed, loops: TestLoops.group,
                                       logger: Logger(sink: .memory, level: .error), config: config, isWriter: { _ in true })
        for index in 0..<5 { _ = try registry.session(for: SessionKey(uid: 1000, clientKey: "key-\(index)"), on: TestLoops.first) }
        let introspection = Introspection(startedAt: .now, storeDescription: "test", version: "0")

        let first = introspection.sessions(registry: registry, limit: 3).arrayValue ?? []
        #expect(first.count == 4)
        #expect(first[3]["truncated"] == .bool(true))
        #expect(first[3]["omitted"] == .int(2))
        let next = try #require(first[3]["next"]?.stringValue)
        #expect(next == first[2]["id"]?.stringValue)

        let rest = introspection.sessions(registry: registry, after: next, limit: 3).arrayValue ?? []
        #expect(rest.count == 2, "the last page has no marker")
        let ids = (first.prefix(3) + rest).compactMap { $0["id"]?.stringValue }
        #expect(Set(ids).count == 5)

        // The default page is capped, and its rows are small: 10,000 fit a frame many times over.
        #expect(Introspection.maximumSessionRows * 600 < FrameLimits.serverToClient)
        _ = feed
    }

    /// Sessions restored after a restart report the screen they are on (here a user's), as
    /// they did before it: `userctl sessions` said "list" for every restored session.
    @Test func aRestoredSessionReportsTheScreenItIsOnAndItsDraft() throws {
        let directory = NSTemporaryDirectory() + "userlistd-introspection-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let repository = try SQLiteUserRepository(path: directory + "/users.sqlite3")
        let feed = try SQLiteChangeFeed(observing: repository)
        let config = DaemonConfig(socketPath: directory + "/s", databasePath: directory + "/users.sqlite3",
                                  stateDirectory: directory)
        let registry = SessionRegistry(useCases: UserUseCases(repository: repository), feed: feed, loops: TestLoops.group,
                                       logger: Logger(sink: .memory, level: .error), config: config, isWriter: { _ in true })
        let ada = User(id: UUID(), name: "Ada", email: "ada@example.com")
        var detail = UserDetailState(userID: ada.id)
        detail.user = ada
        detail.draft = UserFields(name: "Ada B", email: ada.email)
        let onUser = NavigationState(screens: [.list(UserListState()), .detail(detail)])
        let onList = NavigationState(screens: [.list(UserListState())])
        let saved = [("on-user", onUser), ("on-list", onList)].map { key, state in
            SavedSession(key: SessionKey(uid: 1000, clientKey: key), id: key, state: state, detachedAt: Date(),
                         listWindow: nil)
        }
        #expect(registry.restore(saved) == 2)
        let rows = Introspection(startedAt: .now, storeDescription: "test", version: "0")
            .sessions(registry: registry).arrayValue ?? []
        let screens = Dictionary(uniqueKeysWithValues: rows.compactMap { row in
            row["key"]?.stringValue.map { ($0, row["screen"]?.stringValue) }
        })
        #expect(screens == ["on-user": "user", "on-list": "list"])
        // Detached, as after a restart until its person comes back: its draft is the one being
        // kept for them, and `userctl sessions` says so.
        let onUserRow = try #require(rows.first { $0["key"] == "on-user" })
        #expect(onUserRow["user_open"]?.stringValue == UUIDText.lowercase(ada.id) && onUserRow["draft"] == .bool(true))
        let onListRow = try #require(rows.first { $0["key"] == "on-list" })
        #expect(onListRow["user_open"] == .null && onListRow["draft"] == .bool(false))
        _ = feed
    }
}
