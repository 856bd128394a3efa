import Foundation
import Glibc
import Testing
import UserListServer
import UserListWire
import UserListTestSupport

/// One uid can never reach another uid's session, and users outside the admin group may look but
/// not change. Needs root (to run a client as `nobody`); skipped with a reason otherwise.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3))) struct AccessTests {
    static let probeScript = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().appendingPathComponent("Scripts/probe-client.py").path

    @Test(.enabled(if: getuid() == 0, "needs root to run a client as nobody"))
    func anotherUIDGetsItsOwnReadOnlySession() async throws {
        let daemon = try await DaemonHarness()
        chmod(daemon.socketPath, 0o666)
        chmod(daemon.directory, 0o755)

        let root = try daemon.client()
        _ = try await root.hello(key: "shared")
        try await root.waitForState("rows") { _ in root.rows.count == 50 }
        try await root.intent("list", "did_select_row", ["index": 0])
        try await root.intent("detail", "set_draft_name", ["name": "Root's Secret Draft"])

        let (status, data) = try await Self.probeAsNobody(daemon.socketPath, key: "shared")
        #expect(status == 0)

        let result = try JSONValue(parsing: Array(data)).objectValue ?? [:]
        let welcome = result["welcome"]?.objectValue ?? [:]
        #expect(welcome["resumed"] == .bool(false), "the same key under another uid is another session")
        #expect(welcome["access"] == .string("read-only"))
        #expect(welcome["write_group"] == .string(daemon.config.adminGroup), "it names the group that may write")
        #expect(result["screens"] == .int(1), "nobody does not see root's detail screen or draft")
        let reply = result["reply"]?.objectValue ?? [:]
        #expect(reply["ok"] == .bool(false))
        #expect(reply["error"]?.objectValue?["code"] == .string("read_only"))

        // Root's session is untouched.
        #expect(root.detailState?["draft_name"] == .string("Root's Secret Draft"))
        await daemon.stop()
    }

    /// Runs the probe client as `nobody` and hands back its exit status and what it printed.
    /// It is waited for off the pool: this process's daemon needs the pool's threads (a plain
    /// `swift test` once starved it so, and the probe timed out waiting for its reply).
    static func probeAsNobody(_ socketPath: String, key: String) async throws -> (status: Int32, output: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=nobody", "--regid=nogroup", "--clear-groups",
                             "/usr/bin/python3", probeScript, socketPath, key]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let reader = output.fileHandleForReading
        return try await offPool {
            let data = reader.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, data)
        }
    }
}
