import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire

/// `kill -9` of the daemon while someone types in the TUI, then a restart: the TUI reattaches
/// on its own and shows every character typed, whether the daemon's journal had the draft or
/// the TUI had to offer it back (`offer_draft`).
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(2)), .disabled(if: TUIHarness.skipReason != nil, "needs tmux and a built userlistd/userctl (see the printed reason)"))
struct CrashTypingProcessTests {
    typealias H = TUIHarness

    /// Opens the first user, types `typed` after its name, kills the daemon with SIGKILL as soon
    /// as the screen shows the text, restarts it, and waits for the TUI to show the text again.
    static func typeCrashAndRestart(_ h: H, typed: String) async throws -> (expected: String, lines: [String], id: String) {
        let users = try h.allUsers()
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        try h.keys("Enter")
        _ = try await h.waitFor(.seconds(30)) { $0.contains { $0.contains("ID:       \(users[0].id)") } }
        for character in typed { try h.type(String(character)) }
        let expected = users[0].name + typed
        var lines = try await h.waitFor(.seconds(30)) { $0.contains { $0.contains("Name:     \(expected)▏") } }
        #expect(lines.contains { $0.contains("Name:     \(expected)▏") }, "typed before the crash: \(lines.prefix(8))")

        h.daemon.kill9()
        try h.daemon.start()
        // The screen alone could still be the old one: wait until the TUI is attached to the new daemon.
        let reattached = await eventually(timeout: .seconds(30)) { Self.attachedClients(h) > 0 }
        #expect(reattached, "the TUI reattached to the restarted daemon: \(h.daemon.log())")
        lines = try await h.waitFor(.seconds(30)) { lines in
            lines.contains { $0.contains("Name:     \(expected)▏") } && lines[h.rows - 1].contains("connected")
                && !lines[h.rows - 1].contains("reconnecting")
        }
        return (expected, lines, users[0].id)
    }

    /// Clients attached to the TUI's session on the running daemon (`userctl sessions`).
    static func attachedClients(_ h: H) -> Int {
        guard let run = try? h.userctl(["sessions", "--json"]), run.status == 0,
              let rows = (try? JSONValue(parsing: run.output))?.arrayValue else { return 0 }
        let mine = rows.first { $0["key"]?.stringValue == h.server }
        return mine?["clients"]?.int64Value.map { Int($0) } ?? 0
    }

    /// The saved name, once the TUI saved: proof the daemon holds the draft, not only the screen.
    static func saveAndRead(_ h: H, id: String) async throws -> String? {
        try h.keys("C-s")
        _ = try await h.waitFor(.seconds(30)) { $0.contains { $0.contains("Version:  2") } }
        return try JSONValue(parsing: h.userctl(["show", id, "--json"]).output)["name"]?.stringValue
    }

    @Test func everyCharacterTypedBeforeKillNineIsBackWithTheJournal() async throws {
        let h = try H()
        defer { h.tearDown() }
        let (expected, lines, id) = try await Self.typeCrashAndRestart(h, typed: " Journaled")
        #expect(lines.contains { $0.contains("Name:     \(expected)▏") }, "after kill -9 and a restart: \(lines)")
        #expect(try await Self.saveAndRead(h, id: id) == expected)
    }

    @Test func everyCharacterTypedBeforeKillNineIsOfferedBackWithoutTheJournal() async throws {
        // No journal: the restarted daemon has lost the screen and the draft; the TUI puts both back.
        let h = try H(daemonArguments: ["--session-journal-interval", "0"])
        defer { h.tearDown() }
        let (expected, lines, id) = try await Self.typeCrashAndRestart(h, typed: " Offered Back")
        #expect(lines.contains { $0.contains("Name:     \(expected)▏") }, "after kill -9 and a restart: \(lines)")
        #expect(try await Self.saveAndRead(h, id: id) == expected)
    }
}
