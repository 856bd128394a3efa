import Foundation
import UserListTestSupport
import Testing
import UserListClient
import UserListWire

/// The client library against a real `userlistd` process.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)), .disabled(if: RealDaemon.skipReason != nil, "userlistd not built: swift build first"))
struct ClientDaemonTests {
    func connect(_ daemon: RealDaemon, key: String = "t-" + UUID().uuidString) throws -> UserListClient {
        var configuration = ClientConfiguration(socketPath: daemon.socketPath, sessionKey: key, clientName: "tests")
        configuration.replyTimeout = .seconds(60)  // generous: only a hang misses it
        configuration.reconnect.initialDelay = .milliseconds(50)
        let client = UserListClient(configuration: configuration)
        try client.connect()
        return client
    }

    @Test func snapshotThenPatchesAfterAnIntent() async throws {
        let daemon = try RealDaemon()
        defer { daemon.tearDown() }
        let client = try connect(daemon)
        defer { client.close() }
        #expect(client.welcome?.access == .readWrite)
        try await client.send(screen: "list", action: "on_appear")
        let first = SessionDocument(client.document).list
        #expect(first?.users.isEmpty == false)
        #expect(first?.totalCount == 200)
        let count = first?.users.count ?? 0
        try await client.send(screen: "list", action: "did_display_row", args: ["index": .int(Int64(count - 1))])
        #expect((SessionDocument(client.document).list?.users.count ?? 0) > count, "the next page arrived as a patch")

        try await client.send(screen: "list", action: "did_select_row", args: ["index": 0])
        #expect(await client.sees { SessionDocument(client.document).detail?.user != nil })
        try await client.send(screen: "detail", action: "set_draft_name", args: ["name": "Patched Name"])
        #expect(SessionDocument(client.document).detail?.draftName == "Patched Name")
        #expect(client.resyncCount == 0)
    }

    /// A fresh session starts loading on attach; the first page must arrive as a patch without
    /// the client sending anything (a view that only watches must fill in).
    @Test func firstPageArrivesWithoutAnyIntent() async throws {
        let daemon = try RealDaemon()
        defer { daemon.tearDown() }
        for _ in 0..<5 {
            let client = try connect(daemon)
            defer { client.close() }
            let loaded = await client.sees { SessionDocument(client.document).list?.users.isEmpty == false }
            #expect(loaded, "document still \(String(describing: client.document))")
        }
    }

    @Test func failedSaveRepliesWithValidation() async throws {
        let daemon = try RealDaemon()
        defer { daemon.tearDown() }
        let client = try connect(daemon)
        defer { client.close() }
        try await client.send(screen: "list", action: "on_appear")
        let id = try #require(SessionDocument(client.document).list?.users.first?.id)
        try await client.send(screen: "session", action: "open_user", args: ["id": .string(id)])
        try await client.send(screen: "detail", action: "set_draft_name", args: ["name": "   "])
        do {
            try await client.send(screen: "detail", action: "save")
            Issue.record("an empty name saved")
        } catch let error as ClientError {
            #expect(error.serverCode == .validation)
        }
    }

    /// `sendForSlice` hands over the reply's result as the bytes it came in: the same result
    /// `send` parses, a refusal thrown as one, and the session's patches still applied meanwhile.
    @Test func aSliceReplyIsTheParsedReplyUnbuilt() async throws {
        let daemon = try RealDaemon()
        defer { daemon.tearDown() }
        let client = try connect(daemon)
        defer { client.close() }
        let args: [String: JSONValue] = ["limit": 120]
        let parsed = try await client.send(screen: "session", action: "export_page", args: args)
        let slice = try #require(try await client.sendForSlice(screen: "session", action: "export_page", args: args))
        #expect(try slice.parsed() == parsed)
        #expect(try slice.member("users")?.elements()?.count == 120)
        do {
            _ = try await client.sendForSlice(screen: "session", action: "export_page", args: ["limit": -1])
            Issue.record("a negative limit was accepted")
        } catch let error as ClientError {
            #expect(error.serverCode == .invalidArgs)
        }
        #expect(try await client.sendForSlice(screen: "list", action: "on_appear") == nil, "a reply without a result")
        #expect(await client.sees { SessionDocument(client.document).list?.users.isEmpty == false })
    }

    @Test func gapLeadsToResyncAndTheDocumentCatchesUp() async throws {
        let daemon = try RealDaemon()
        defer { daemon.tearDown() }
        let client = try connect(daemon)
        defer { client.close() }
        try await client.send(screen: "list", action: "on_appear")
        try await client.send(screen: "list", action: "did_select_row", args: ["index": 0])
        _ = await client.sees { SessionDocument(client.document).detail?.user != nil }
        client.dropNextPatches(1)
        try await client.send(screen: "detail", action: "set_draft_name", args: ["name": "Lost"])
        // The lost patch is noticed at the next one; the snapshot that answers the resync has both.
        try await client.send(screen: "detail", action: "set_draft_name", args: ["name": "Lost and found"])
        #expect(await client.sees { SessionDocument(client.document).detail?.draftName == "Lost and found" })
        #expect(client.resyncCount == 1)
        try await client.send(screen: "detail", action: "set_draft_name", args: ["name": "In step again"])
        #expect(SessionDocument(client.document).detail?.draftName == "In step again")
        #expect(client.resyncCount == 1)
    }

    @Test func twoClientsOnOneKeyMirrorEachOther() async throws {
        let daemon = try RealDaemon()
        defer { daemon.tearDown() }
        let a = try connect(daemon, key: "shared")
        defer { a.close() }
        let b = try connect(daemon, key: "shared")
        defer { b.close() }
        #expect(b.welcome?.resumed == true)
        try await a.send(screen: "list", action: "on_appear")
        try await a.send(screen: "list", action: "did_select_row", args: ["index": 1])
        try await a.send(screen: "detail", action: "set_draft_name", args: ["name": "Typed in A"])
        #expect(await b.sees { SessionDocument(b.document).detail?.draftName == "Typed in A" })
    }

    @Test func reattachesToTheSameSessionAfterADaemonRestart() async throws {
        let daemon = try RealDaemon()
        defer { daemon.tearDown() }
        let client = try connect(daemon)
        defer { client.close() }
        try await client.send(screen: "list", action: "on_appear")
        try await client.send(screen: "list", action: "did_select_row", args: ["index": 2])
        _ = await client.sees { SessionDocument(client.document).detail?.user != nil }
        let userID = SessionDocument(client.document).detail?.userID
        try await client.send(screen: "detail", action: "set_draft_name", args: ["name": "Draft kept"])

        daemon.stop()
        #expect(await client.sees { !client.connectionState.isConnected })
        try daemon.start()
        #expect(await client.sees { client.connectionState.isConnected })
        #expect(client.welcome?.resumed == true)
        let document = SessionDocument(client.document)
        #expect(document.detail?.userID == userID)
        #expect(document.detail?.draftName == "Draft kept")
        try await client.send(screen: "detail", action: "back")
        #expect(await client.sees { !SessionDocument(client.document).showsDetail })
    }

    @Test func unreachableSocketFailsFast() throws {
        let client = UserListClient(configuration: ClientConfiguration(socketPath: "/tmp/no-such-dir/sock", sessionKey: "k"))
        #expect(throws: ClientError.self) { try client.connect() }
    }
}
