import Glibc
import Testing
import UserListTestSupport

/// Issue 46 item 5 through tmux against a real daemon: `u` on a history entry whose undo removes
/// a user (undoing "added") or creates it again (undoing "removed") asks first, and only `y`
/// does it; after each undo the screens show the user as it now is (no "loading…" left). A
/// read-only session is told why not, never asked. Every wait is for a screen condition.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)), .disabled(if: TUIHarness.skipReason != nil, "needs tmux and a built userlistd/userctl (see the printed reason)"))
struct TUIUndoAsksProcessTests {
    typealias H = TUIHarness

    @Test func undoThatRemovesOrCreatesAUserAsksFirst() async throws {
        let h = try H()
        defer { h.tearDown() }
        #expect(try h.userctl(["add", "--name", "Undo Lovelace", "--email", "undo-ada@example.com"]).status == 0)
        let id = try #require(try h.allUsers().first { $0.email == "undo-ada@example.com" }?.id)
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        try h.keys("/")
        try h.type("undo-ada")
        try h.keys("Enter")
        var lines = try await h.waitFor { H.cursorRow($0) == 2 && $0[2].contains("undo-ada@example.com") && $0[0].contains("search") }
        try #require(lines[2].contains("undo-ada@example.com"), "found: \(lines)")
        try h.keys("h")
        lines = try await h.waitFor { $0[0].contains("History") && $0.contains { $0.contains("added \"Undo Lovelace\"") } }
        try #require(lines.contains { $0.contains("added \"Undo Lovelace\"") }, "the history: \(lines)")
        let added = try #require(lines.first { $0.contains("added \"Undo Lovelace\"") }?.split(separator: "#").dropFirst().first?.prefix { $0.isNumber })

        // n (any key but y) keeps the user.
        try h.keys("u")
        let removes = "Undo #\(added): this removes Undo Lovelace (undo-ada@example.com). y/N"
        lines = try await h.waitFor { $0.contains { $0.contains(removes) } }
        #expect(lines.contains { $0.contains(removes) }, "u asks first: \(lines)")
        try h.keys("n")
        lines = try await h.waitFor { !$0.contains { $0.contains("y/N") } }
        #expect(!lines.contains { $0.contains("y/N") }, "n answers: \(lines)")
        #expect(try h.userctl(["show", id]).status == 0, "n kept the user")
        #expect(!lines.contains { $0.contains("undoes #") }, "and undid nothing: \(lines)")

        // y removes it.
        try h.keys("u")
        _ = try await h.waitFor { $0.contains { $0.contains(removes) } }
        try h.keys("y")
        lines = try await h.waitFor { $0.contains { $0.contains("removed \"Undo Lovelace\" (undoes #\(added))") } }
        #expect(lines.contains { $0.contains("removed \"Undo Lovelace\" (undoes #\(added))") }, "y undid it: \(lines)")
        #expect(try h.userctl(["show", id]).status != 0, "the user is gone")
        let removed = try #require(lines.first { $0.contains("(undoes #\(added))") }?.split(separator: "#").dropFirst().first?.prefix { $0.isNumber })

        // Undoing the removal creates the user again, after asking.
        try h.keys("k", "k")
        try h.keys("u")
        let creates = "Undo #\(removed): this creates Undo Lovelace again. y/N"
        lines = try await h.waitFor { $0.contains { $0.contains(creates) } }
        #expect(lines.contains { $0.contains(creates) }, "u asks first: \(lines)")
        try h.keys("y")
        lines = try await h.waitFor { $0.contains { $0.contains("(undoes #\(removed))") } && !$0.contains { $0.contains("undoing…") } }
        #expect(lines.contains { $0.contains("added \"Undo Lovelace\" (undoes #\(removed))") }, "y created it again: \(lines)")
        #expect(try h.userctl(["show", id]).status == 0, "the user is back")
        #expect(!lines.joined().contains("reading…") && !lines.joined().contains("loading…"), "nothing left loading: \(lines)")

        // Back on the user's screen: the user as it now is.
        try h.keys("Escape")
        lines = try await h.waitFor { $0.contains { $0.contains("Name:     Undo Lovelace") } && !$0.joined().contains("loading…") }
        #expect(lines.contains { $0.contains("Name:     Undo Lovelace") }, "the user again: \(lines)")
        #expect(!lines.joined().contains("loading…"), "not stuck loading: \(lines)")
    }

    /// A session of `nobody` may look at a history but not undo: `u` says why, and never asks.
    @Test(.enabled(if: getuid() == 0, "needs root to run the TUI as nobody"))
    func aReadOnlySessionIsToldItCannotUndo() async throws {
        let h = try H(columns: 100, rows: 30, command: H.readOnlyShell)
        defer { h.tearDown() }
        let users = try h.allUsers()
        #expect(try h.userctl(["rename", users[0].id, "Renamed For Undo"]).status == 0)
        var lines = try await h.startReadOnlyTUI()
        try #require(lines.last?.contains("(read-only)") == true, "a read-only session: \(lines)")
        try h.keys("/")
        try h.type(users[0].email)
        try h.keys("Enter")
        lines = try await h.waitFor { H.cursorRow($0) == 2 && $0[2].contains("Renamed For Undo") && $0[0].contains("search") }
        try #require(lines[2].contains("Renamed For Undo"), "found: \(lines)")
        try h.keys("h")
        lines = try await h.waitFor { $0[0].contains("History") && $0.contains { $0.contains("\"Renamed For Undo\"") } }
        try #require(lines.contains { $0.contains("\"Renamed For Undo\"") }, "the history: \(lines)")
        try h.keys("u")
        lines = try await h.waitFor { $0[1].contains("read-only") }
        #expect(lines[1].contains("cannot undo changes"), "u says why not: \(lines)")
        #expect(!lines.contains { $0.contains("y/N") } && !lines.joined().contains("undoing…"), "and never asks: \(lines)")
    }
}
