import Foundation
import Testing

/// The interactive screen driven through tmux: keys in with send-keys, screen out with
/// capture-pane. Skipped (with the reason) when tmux is not installed.
let tmuxPath: String? = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].first { FileManager.default.isExecutableFile(atPath: $0) }

@Suite(.serialized, .disabled(if: RealDaemon.skipReason != nil || tmuxPath == nil, "needs a built userlistd and tmux"))
struct TUITests {

    @discardableResult
    static func tmux(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tmuxPath!)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
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
