import Testing
import UserListTestSupport

/// Issue 28 item 5 through tmux against a real daemon: `h` on a user's screen opens its
/// history while the name is as stored, and once the name has been changed `h` types into it
/// (a name being edited gets every key that types). Every wait is for a screen condition.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)), .disabled(if: TUIHarness.skipReason != nil, "needs tmux and a built userlistd/userctl (see the printed reason)"))
struct TUIHistoryKeyProcessTests {
    typealias H = TUIHarness

    @Test func hOnAUserScreenOpensItsHistoryUntilTheNameIsChanged() async throws {
        let h = try H()
        defer { h.tearDown() }
        let user = try h.allUsers()[0]
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        try h.keys("Enter")
        _ = try await h.waitFor { $0.contains { $0.contains("ID:       \(user.id)") } }

        try h.keys("h")
        var lines = try await h.waitFor { $0[0].contains("istory") }
        #expect(lines[0].contains("istory"), "h opened the user's history: \(lines.prefix(4))")
        // Its keys in short words, above the status line as on every screen.
        let hints = try #require(lines.firstIndex { $0.contains("F1 help") }, "\(lines)")
        let status = try #require(lines.firstIndex { $0.contains("● connected") }, "\(lines)")
        #expect(hints < status && lines[hints].contains("u undo") && lines[hints].contains("Esc back"), "\(lines)")
        try h.keys("Escape")
        lines = try await h.waitFor { $0.contains { $0.contains("ID:       \(user.id)") } }
        #expect(lines.contains { $0.contains("Name:     \(user.name)▏") }, "back on the user, name unchanged: \(lines.prefix(8))")

        try h.type(" Xh")
        lines = try await h.waitFor { $0.contains { $0.contains("Name:     \(user.name) Xh▏") } }
        #expect(lines.contains { $0.contains("Name:     \(user.name) Xh▏") }, "once changed, h types: \(lines.prefix(8))")
        #expect(!lines[0].contains("istory"), "and opens nothing: \(lines.prefix(2))")
    }
}
