import Testing
import UserListTestSupport

/// Issue 48 item 8c through tmux against a real daemon: a key pressed while the daemon is away
/// is refused with a word ("Not connected (reconnecting): that key did nothing"), and that
/// word goes by itself once the TUI is connected again. Every wait is for a screen condition.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)), .disabled(if: TUIHarness.skipReason != nil, "needs tmux and a built userlistd/userctl (see the printed reason)"))
struct TUIReconnectProcessTests {
    typealias H = TUIHarness

    @Test func aKeyRefusedWhileDisconnectedSaysSoAndTheWordClearsOnReconnect() async throws {
        let h = try H()
        defer { h.tearDown() }
        _ = try await h.waitFor { H.cursorRow($0) == 2 && $0.last?.contains("● connected") == true }
        h.daemon.stop()
        var lines = try await h.waitFor { $0.last?.contains("reconnecting") == true }
        try #require(lines.last?.contains("reconnecting") == true, "the daemon is away: \(lines)")
        try h.keys("r")
        lines = try await h.waitFor { $0[1].contains("Not connected (reconnecting): that key did nothing") }
        #expect(lines[1].contains("Not connected (reconnecting): that key did nothing"), "r is refused with a word: \(lines)")
        try h.daemon.start()
        lines = try await h.waitFor { $0.last?.contains("● connected") == true && !$0[1].contains("onnected") }
        #expect(lines.last?.contains("● connected") == true, "connected again: \(lines)")
        #expect(!lines[1].contains("onnected"), "the word went by itself: \(lines)")
    }
}
