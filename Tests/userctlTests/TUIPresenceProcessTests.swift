import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire

/// Issue 28 item 7 through tmux against a real daemon, as two people would try it: two
/// terminals (two sessions) open the same user; the first sees the second arrive, then "is
/// editing this user" while the second types, never the second's text; back on the list, the
/// row is marked. And `h` on the list opens the history of the user under the cursor. Every
/// wait is for a screen condition, never a fixed time.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)), .disabled(if: TUIHarness.skipReason != nil, "needs tmux and a built userlistd/userctl (see the printed reason)"))
struct TUIPresenceProcessTests {
    typealias H = TUIHarness

    /// The login name the daemon shows for the uid running the tests.
    static var loginName: String {
        guard let entry = getpwuid(getuid()), let name = entry.pointee.pw_name else { return "uid \(getuid())" }
        return String(cString: name)
    }

    /// The second terminal's tmux: a server of its own (tmux 3.3a's server exits on a second
    /// window or session next to a detached one with a manual window size).
    @discardableResult
    func secondTmux(_ h: H, _ arguments: [String]) throws -> (status: Int32, output: String) {
        try H.run(H.tmuxPath!, ["-L", h.server + "-2", "-f", "/dev/null", "-u"] + arguments)
    }

    /// The second terminal: the TUI on its own session key.
    func openSecondTerminal(_ h: H) throws {
        let command = "\(h.userctl) --socket \(h.daemon.socketPath) --session \(h.server)-second tui; sleep 60"
        try secondTmux(h, ["new-session", "-d", "-s", "second", "-x", "100", "-y", "30", command])
    }

    func second(_ h: H) throws -> [String] {
        try secondTmux(h, ["capture-pane", "-p", "-t", "second"]).output.components(separatedBy: "\n")
    }

    func waitForSecond(_ h: H, _ condition: ([String]) -> Bool) async throws -> [String] {
        var lines: [String] = []
        _ = try await eventually(every: .milliseconds(40)) {
            lines = try second(h)
            return condition(lines)
        }
        return lines
    }

    @Test func aSecondTerminalOnTheSameUserShowsWhoIsEditingIt() async throws {
        let h = try H()
        defer {
            _ = try? secondTmux(h, ["kill-server"])
            h.tearDown()
        }
        let user = try h.allUsers()[0]
        let name = Self.loginName
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        try h.keys("Enter")
        var lines = try await h.waitFor { $0.contains { $0.contains("ID:       \(user.id)") } }
        #expect(!lines.contains { $0.contains("this user open") || $0.contains("editing this user") }, "alone: \(lines.prefix(12))")

        try openSecondTerminal(h)
        var other = try await waitForSecond(h) { $0.contains { $0.hasPrefix("▸ ") } && $0.contains { $0.contains("● ") } }
        #expect(other.contains { $0.contains(user.name) && $0.contains("● ") }, "the second list marks the open user: \(other.prefix(6))")
        try secondTmux(h, ["send-keys", "-t", "second", "Enter"])
        other = try await waitForSecond(h) { $0.contains { $0.contains("ID:       \(user.id)") } }
        lines = try await h.waitFor { $0.contains { $0.contains("\(name) also has this user open") } }
        #expect(lines.contains { $0.contains("\(name) also has this user open") }, "the first sees the second: \(lines.prefix(12))")
        #expect(other.contains { $0.contains("\(name) also has this user open") }, "and the other way: \(other.prefix(12))")

        try secondTmux(h, ["send-keys", "-t", "second", "-l", " Zqxj"])
        lines = try await h.waitFor { $0.contains { $0.contains("\(name) is editing this user") } }
        #expect(lines.contains { $0.contains("\(name) is editing this user") }, "editing: \(lines.prefix(12))")
        #expect(!lines.contains { $0.contains("Zqxj") }, "never the other's draft: \(lines.prefix(12))")

        try h.keys("Escape")
        lines = try await h.waitFor { H.cursorRow($0) != nil }
        #expect(lines.contains { $0.contains(user.name) && $0.contains("● ") }, "back on the list, the row is marked: \(lines.prefix(6))")

        // h on the list: the history of the user under the cursor.
        try h.keys("h")
        lines = try await h.waitFor { $0[0].contains("istory") }
        #expect(lines[0].contains("istory"), "h opened the history: \(lines.prefix(4))")
    }
}
