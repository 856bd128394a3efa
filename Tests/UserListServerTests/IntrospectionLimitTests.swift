import Foundation
import Testing
import UserListData
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
}
