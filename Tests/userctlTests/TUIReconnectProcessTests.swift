import Foundation
import Testing
import UserListTestSupport
import UserListWire

/// Issue 48 item 8c through tmux against a real daemon: a key pressed while the daemon is away
/// is refused with a word ("Not connected (reconnecting): that key did nothing"), and that
/// word goes by itself once the TUI is connected again. Every wait is for a screen condition.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)), .disabled(if: TUIHarness.skipReason != nil, "needs tmux and a built userlistd/userctl (see the printed reason)"))
struct TUIReconnectProcessTests {
    typealias H = TUIHarness

    /// The words of rows 1 to 3 (a message wraps there), as one text.
    static func message(_ lines: [String]) -> String {
        lines.dropFirst().prefix(3).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }

    /// At 40x10 the message wraps whole (issue 48 item 8b: warnings were cut, "Und…").
    @Test(arguments: [(100, 30), (40, 10)])
    func aKeyRefusedWhileDisconnectedSaysSoAndTheWordClearsOnReconnect(columns: Int, rows: Int) async throws {
        let h = try H(columns: columns, rows: rows)
        defer { h.tearDown() }
        _ = try await h.waitFor { H.cursorRow($0) == 2 && $0.last?.contains("● connected") == true }
        h.daemon.stop()
        var lines = try await h.waitFor { $0.last?.contains("reconnecting") == true }
        try #require(lines.last?.contains("reconnecting") == true, "the daemon is away: \(lines)")
        try h.keys("r")
        let said = "Not connected (reconnecting): that key did nothing; try it again once connected. (Esc dismisses)"
        lines = try await h.waitFor { Self.message($0).contains(said) }
        #expect(Self.message(lines).contains(said), "r is refused with a word, whole: \(lines)")
        #expect(H.cursorRow(lines) != nil && !lines[1...3].contains { $0.hasSuffix("…") }, "the cursor's row stays, nothing cut: \(lines)")
        try h.daemon.start()
        lines = try await h.waitFor { $0.last?.contains("● connected") == true && !Self.message($0).contains("Not connected") }
        #expect(lines.last?.contains("● connected") == true, "connected again: \(lines)")
        #expect(!Self.message(lines).contains("Not connected"), "the word went by itself: \(lines)")
    }

    /// Opens the first user's screen; returns its id and name.
    static func openFirstUser(_ h: H) async throws -> (id: String, name: String) {
        let first = try #require(try h.allUsers().first)
        _ = try await h.waitFor { H.cursorRow($0) == 2 && $0.last?.contains("● connected") == true }
        try h.keys("Enter")
        let lines = try await h.waitFor { $0.contains { $0.contains("Name:     \(first.name)▏") } }
        try #require(lines.contains { $0.contains("ID:       \(first.id)") }, "the first user is open: \(lines)")
        return (first.id, first.name)
    }

    /// The daemon stopped (`kill -9` when `killed`), then `typed` typed on the open user's screen;
    /// returns the screen once the keys were handled (the text shows, or a word about the connection).
    static func typeWhileAway(_ h: H, _ typed: String, after name: String,
                              killed: Bool = false) async throws -> [String] {
        if killed { h.daemon.kill9() } else { h.daemon.stop() }
        let away = try await h.waitFor { $0.last?.contains("reconnecting") == true }
        try #require(away.last?.contains("reconnecting") == true, "the daemon is away: \(away)")
        try h.type(typed)
        return try await h.waitFor { lines in
            lines.contains { $0.contains("Name:     \(name + typed)▏") } || lines.joined().contains("ot connected")
        }
    }

    /// Typing while away used to leave "⚠ not connected to userlistd (reconnecting)" on screen
    /// after the reconnect; no such word outlives the drop.
    @Test func noWordAboutTheDropStaysOnceReconnectedAfterTyping() async throws {
        let h = try H()
        defer { h.tearDown() }
        let user = try await Self.openFirstUser(h)
        _ = try await Self.typeWhileAway(h, "QQ", after: user.name)
        try h.daemon.start()
        let lines = try await h.waitFor { $0.last?.contains("● connected") == true }
        #expect(lines.last?.contains("● connected") == true, "connected again: \(lines)")
        #expect(!lines.joined().lowercased().contains("not connected"), "no word about the drop stays: \(lines)")
    }

    /// README: "Typing on a user's screen is kept and sent once reconnected". The text shows as
    /// typed while away, and after the reconnect the daemon has it (a save stores it): after a
    /// stop (the daemon's journal keeps the screen), and after `kill -9` of a daemon without a
    /// journal (the TUI offers the draft back and the daemon opens the user again).
    @Test(arguments: [false, true])
    func textTypedWhileAwayShowsAtOnceAndReachesTheDaemon(killedWithoutJournal: Bool) async throws {
        let h = try H(daemonArguments: killedWithoutJournal ? ["--session-journal-interval", "0"] : [])
        defer { h.tearDown() }
        let user = try await Self.openFirstUser(h)
        let expected = user.name + "QQ"
        var lines = try await Self.typeWhileAway(h, "QQ", after: user.name, killed: killedWithoutJournal)
        try #require(lines.contains { $0.contains("Name:     \(expected)▏") }, "shown as typed while away: \(lines)")
        try h.daemon.start()
        lines = try await h.waitFor { lines in
            lines.last?.contains("● connected") == true && lines.contains { $0.contains(user.id) }
        }
        #expect(lines.contains { $0.contains("Name:     \(expected)▏") }, "still shown once reconnected: \(lines)")
        try h.keys("C-s")
        lines = try await h.waitFor { $0.contains { $0.contains("Version:  2") } }
        let saved = try JSONValue(parsing: h.userctl(["show", user.id, "--json"]).output)["name"]?.stringValue
        #expect(saved == expected, "the daemon had the text typed while away: \(lines)")
    }

    /// An edit of the email made before a `kill -9` of a daemon without a journal comes back
    /// with the reconnect (the TUI offers every changed field back, not the name alone).
    @Test func anEmailEditTheDaemonLostInACrashComesBack() async throws {
        let h = try H(daemonArguments: ["--session-journal-interval", "0"])
        defer { h.tearDown() }
        let user = try await Self.openFirstUser(h)
        let email = try #require(try h.allUsers().first { $0.id == user.id }?.email)
        try h.keys("Tab")
        try h.type("x")
        let edited = email + "x"
        _ = try await h.waitFor { $0.contains { $0.contains("Email:    \(edited)▏") } && $0.joined().contains("modified") }
        h.daemon.kill9()
        _ = try await h.waitFor { $0.last?.contains("reconnecting") == true }
        try h.daemon.start()
        var lines = try await h.waitFor { lines in
            lines.last?.contains("● connected") == true && lines.contains { $0.contains("Email:    \(edited)▏") }
        }
        try h.keys("C-s")
        lines = try await h.waitFor { $0.contains { $0.contains("Version:  2") } }
        let saved = try JSONValue(parsing: h.userctl(["show", user.id, "--json"]).output)["email"]?.stringValue
        #expect(saved == edited, "the daemon had the email edit back: \(lines)")
    }
}
