import Foundation
import Testing
import UserListClient
import UserListTestSupport
import UserListWire

/// A terminal open on the list while users are imported (issue 29, item 4): an all-or-nothing
/// import reaches it as one reload, and a burst of changes of any size (an old client's chunked
/// import: a `changed` event per user) leaves it answering keys, because the TUI draws once per
/// batch of inputs rather than once per input.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(5)), .disabled(if: TUIHarness.skipReason != nil, "needs tmux and a built userlistd/userctl (see the printed reason)"))
struct TUIDuringImportProcessTests {
    typealias H = TUIHarness

    static func users(_ count: Int, tag: String) -> [JSONValue] {
        (0..<count).map { i in
            .object(["id": .string(String(format: "%08x-0000-4000-8000-%012x", i, tag.hashValue & 0xffff_ffff)),
                     "name": .string("\(tag) \(i)"), "email": .string("\(tag.lowercased())\(i)@example.org")])
        }
    }

    @Test func anImportReachesAnOpenListAsOneReloadAndTheListAnswersKeys() async throws {
        let h = try H(sampleData: 200)
        defer { h.tearDown() }
        _ = try await h.waitFor { H.shows($0, loaded: 50, of: 200) && H.cursorRow($0) == 2 }
        let file = h.daemon.directory + "/import.json"
        try Data(JSONValue.array(Self.users(20_000, tag: "Imported")).description.utf8).write(to: URL(fileURLWithPath: file))
        let imported = try h.userctl(["import", "--quiet", file])
        #expect(imported.status == 0, "\(imported.output)")
        // One reload: the new total, and not `[stale]` (no change per user reached it).
        var lines = try await h.waitFor { H.shows($0, loaded: 50, of: 20_200) }
        #expect(H.shows(lines, loaded: 50, of: 20_200) && !H.header(lines).contains("[stale]"), "\(lines)")
        try h.keys("j")
        lines = try await h.waitFor { H.cursorRow($0) == 3 }
        #expect(H.cursorRow(lines) == 3, "the key was answered: \(lines)")
    }

    @Test func aBurstOfChangedEventsLeavesTheTUIAnsweringKeys() async throws {
        let h = try H(sampleData: 200)
        defer { h.tearDown() }
        _ = try await h.waitFor { H.shows($0, loaded: 50, of: 200) && H.cursorRow($0) == 2 }
        var configuration = ClientConfiguration(socketPath: h.daemon.socketPath, sessionKey: "burst-" + UUID().uuidString, clientName: "tests")
        configuration.replyTimeout = .seconds(120)
        let client = UserListClient(configuration: configuration)
        try client.connect()
        defer { client.close() }
        // Chunks applied one by one: each user reaches the TUI as a change and a `changed` event.
        let users = Self.users(10_000, tag: "Burst")
        for start in stride(from: 0, to: users.count, by: 250) {
            try await client.send(screen: "session", action: "import_users", args: ["users": .array(Array(users[start..<start + 250]))])
        }
        try h.keys("j")
        // The title counts as the TUI does ("2 of 10,200"): the burst is in, and the key answered.
        let lines = try await h.waitFor { H.cursorRow($0) == 3 && H.shows($0, place: 2, of: 10_200) }
        #expect(H.cursorRow(lines) == 3, "the key was answered after the burst: \(lines)")
        #expect(H.shows(lines, place: 2, of: 10_200), "the whole burst reached the list: \(lines[0])")
    }
}
