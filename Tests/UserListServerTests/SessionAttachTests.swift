import Foundation
import Testing
import UserListData
import UserListPresentation
@testable import UserListServer
import UserListWire

/// The attach stage alone, on a real registry: a new key opens a session, the same key resumes
/// it, the welcome says what the client may do, and a uid at its limit is refused.
@Suite struct SessionAttachTests {
    static func hello(_ key: String) -> ClientMessage.Hello {
        .init(protocolVersions: ProtocolVersion.supported, client: PeerInfo(name: "test", build: "0"), sessionKey: key)
    }

    @Test func aKeyOpensThenResumesItsSessionAndTheWelcomeSaysWhatTheClientMayDo() async throws {
        let directory = NSTemporaryDirectory() + "userlistd-attach-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let repository = try SQLiteUserRepository(path: directory + "/users.sqlite3")
        let feed = try SQLiteChangeFeed(observing: repository)
        var config = DaemonConfig(socketPath: directory + "/s", databasePath: directory + "/users.sqlite3",
                                  stateDirectory: directory)
        config.maxSessionsPerUID = 1
        config.intentsPerSecond = 9
        config.retentionSeconds = 41.6
        config.adminGroup = "wheel"
        let registry = SessionRegistry(useCases: UserUseCases(repository: repository), feed: feed,
                                       loops: TestLoops.group, logger: Logger(sink: .memory, level: .error),
                                       config: config, isWriter: { $0 == 0 })
        let server = PeerInfo(name: "userlistd", build: "test")
        let stage = SessionAttach(registry: registry, config: config, server: server)

        let keyA = SessionKey(uid: 0, clientKey: "a")
        let first = stage.open(Self.hello("a"), key: keyA, on: TestLoops.first)
        guard case .opened(let session, let welcome) = first else {
            Issue.record("a new key was refused"); return
        }
        let sessionID = await session.id
        #expect(welcome.sessionID == sessionID && !welcome.resumed && welcome.server == server)
        #expect(welcome.protocolVersion == ProtocolVersion.current)
        #expect(welcome.access == .readWrite && welcome.writeGroup == nil)
        #expect(welcome.intentsPerSecond == 9 && welcome.sessionRetentionSeconds == 42)

        guard case .opened(let again, let resumed) = stage.open(Self.hello("a"), key: keyA, on: TestLoops.first) else {
            Issue.record("the same key was refused"); return
        }
        #expect(again === session && resumed.resumed && resumed.epoch != welcome.epoch, "a new epoch each attach")

        guard case .opened(_, let reader) = stage.open(Self.hello("b"), key: SessionKey(uid: 1000, clientKey: "b"),
                                                       on: TestLoops.first) else {
            Issue.record("another uid was refused"); return
        }
        #expect(reader.access == .readOnly && reader.writeGroup == "wheel", "told whom to ask")

        // uid 0 holds its one session, still attaching: nothing to evict.
        guard case .refused(.tooManySessions, let message) = stage.open(Self.hello("c"),
                                                                         key: SessionKey(uid: 0, clientKey: "c"),
                                                                         on: TestLoops.first) else {
            Issue.record("a uid at its limit was not refused"); return
        }
        #expect(message == "uid 0 already holds 1 sessions; reuse a session key or close some.")
        _ = feed
    }
}
