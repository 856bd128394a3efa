import Foundation
import UserListTestSupport
import Glibc
import Testing

/// The interactive screen driven through tmux: keys in with send-keys, screen out with
/// capture-pane. Skipped (with the reason) when tmux is not installed.
let tmuxPath: String? = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].first { FileManager.default.isExecutableFile(atPath: $0) }

@Suite(.serialized, .disabled(if: RealDaemon.skipReason != nil || tmuxPath == nil, "needs a built userlistd and tmux"))
struct TUITests {

    /// Runs tmux with posix_spawn and waitpid. Not Foundation's Process: `new-session` may
    /// start the tmux server, which inherits the child's descriptors, and Process then waits
    /// for a pipe the server never closes.
    @discardableResult
    static func tmux(_ arguments: [String]) throws -> String {
        let file = "/tmp/ulct-tmux-\(getpid())-\(UUID().uuidString.prefix(6)).out"
        defer { unlink(file) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, arguments.first == "capture-pane" ? file : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv: [UnsafeMutablePointer<CChar>?] = ([tmuxPath!] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, tmuxPath!, &actions, nil, argv, environ) == 0 else { throw RealDaemon.Failure("cannot run tmux") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
    }

    static func screen(_ session: String) throws -> [String] {
        try tmux(["capture-pane", "-p", "-t", session]).components(separatedBy: "\n")
    }

    static func waitFor(_ session: String, _ condition: ([String]) -> Bool) async throws -> [String] {
        var lines: [String] = []
        for _ in 0..<100 {
            lines = try screen(session)
            if condition(lines) { return lines }
            try await Task.sleep(for: .milliseconds(50))
        }
        return lines
    }

    @Test func browseOpenEditSaveAndQuit() async throws {
        let daemon = try RealDaemon(sampleData: 120)
        let session = "ulct-" + String(UUID().uuidString.prefix(6))
        defer {
            _ = try? Self.tmux(["kill-session", "-t", session])
            daemon.tearDown()
        }
        let userctl = try #require(RealDaemon.productsDirectory) + "/userctl"
        try Self.tmux(["new-session", "-d", "-s", session, "-x", "100", "-y", "30",
                       "\(userctl) --socket \(daemon.socketPath) --session \(session) tui; echo EXITED-$?; sleep 60"])

        var lines = try await Self.waitFor(session) { $0.first?.contains("Users (") == true && $0.contains { $0.hasPrefix("▸ ") } }
        #expect(lines[0].contains("Users (50 of 120)") || lines[0].contains("of 120"), "\(lines)")
        #expect(lines.contains { $0.contains("session \(session)") && $0.contains("connected") })
        #expect(lines.filter { $0.contains("@") }.count >= 20, "rows visible")

        try Self.tmux(["send-keys", "-t", session, "j", "j", "k"])
        lines = try await Self.waitFor(session) { $0.firstIndex { $0.hasPrefix("▸ ") } == 3 }
        #expect(lines.firstIndex { $0.hasPrefix("▸ ") } == 3, "cursor on the second row: \(lines.prefix(5))")

        try Self.tmux(["send-keys", "-t", session, "Enter"])
        lines = try await Self.waitFor(session) { $0.contains { $0.contains("Name:") } && $0.contains { $0.contains("Version:  1") } }
        #expect(lines.contains { $0.contains("Email:") })

        try Self.tmux(["send-keys", "-t", session, "C-u"])  // no-op key; then retype the name
        for _ in 0..<40 { try Self.tmux(["send-keys", "-t", session, "BSpace"]) }
        try Self.tmux(["send-keys", "-t", session, "-l", "Aaa Zoë TUI"])
        lines = try await Self.waitFor(session) { $0.contains { $0.contains("Name:     Aaa Zoë TUI") } }
        #expect(lines.contains { $0.contains("Name:     Aaa Zoë TUI") }, "\(lines.prefix(6))")
        try Self.tmux(["send-keys", "-t", session, "C-s"])
        lines = try await Self.waitFor(session) { $0.contains { $0.contains("Version:  2") } }
        #expect(lines.contains { $0.contains("Version:  2") }, "saved: \(lines.prefix(10))")

        try Self.tmux(["send-keys", "-t", session, "Escape"])
        lines = try await Self.waitFor(session) { $0.contains { $0.contains("Aaa Zoë TUI") && $0.contains("@") } }
        #expect(lines.contains { $0.contains("Aaa Zoë TUI") && $0.contains("@") }, "back on the list with the new name")

        try Self.tmux(["send-keys", "-t", session, "q"])
        lines = try await Self.waitFor(session) { $0.contains { $0.contains("EXITED-0") } }
        #expect(lines.contains { $0.contains("EXITED-0") }, "quit restores the shell")
        #expect(!lines.contains { $0.contains("userctl · Users") }, "alternate screen left")
    }
}
