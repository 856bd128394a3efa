import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire

/// Issue 48 item 3: `userctl watch` reports every kind of change, imports included, in text and
/// with `--json`. An import reaches other sessions as one reload (no `changed` per user), which
/// the daemon now announces as `session` `reloaded`; watch tells who imported how many users from
/// the history.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)),
       .disabled(if: RealDaemon.skipReason != nil, "userlistd not built: swift build first"))
struct WatchProcessTests {
    /// `userctl watch` in the background, its stdout and stderr read as they arrive.
    final class Watcher {
        let process = Process()
        let stdout = CapturedOutput()
        let stderr = CapturedOutput()

        init(_ arguments: [String]) throws {
            let products = try #require(RealDaemon.productsDirectory)
            process.executableURL = URL(fileURLWithPath: products + "/userctl")
            process.arguments = arguments + ["watch"]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = stdout.writingEnd
            process.standardError = stderr.writingEnd
            try process.run()
            // The child has its copies: closing ours lets the reader see end of file when it exits.
            try stdout.writingEnd.close()
            try stderr.writingEnd.close()
        }

        var out: String { stdout.text }
        var err: String { stderr.text }

        /// Waits until what the watcher printed so far satisfies `condition`.
        func printed(_ condition: (_ out: String) -> Bool) async -> Bool { await stdout.sees { condition(out) } }

        func stop() {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
    }

    /// `userctl import -` with `input` on stdin.
    static func importFromStdin(_ socket: [String], _ input: String) throws -> Int32 {
        let products = try #require(RealDaemon.productsDirectory)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: products + "/userctl")
        process.arguments = socket + ["import", "-", "--quiet"]
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        return process.terminationStatus
    }

    static var me: String {
        guard let entry = getpwuid(getuid()), let name = entry.pointee.pw_name else { return "uid \(getuid())" }
        return String(cString: name)
    }

    @Test func importsFromAFileAndFromStdinAreReported() async throws {
        let daemon = try RealDaemon(sampleData: 3)
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath]
        let json = try Watcher(socket + ["--json"])
        defer { json.stop() }
        let text = try Watcher(socket)
        defer { text.stop() }
        // "connected" comes once the watch reads where the history stands and follows changes.
        #expect(await json.printed { $0.contains(#"{"connection":"connected"}"#) }, "\(json.out)")
        #expect(await text.stderr.sees { text.err.contains("userctl: connected") }, "\(text.err)")

        let file = daemon.directory + "/one.json"
        try #"[{"name":"Ada File","email":"ada.file@example.org"}]"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try UserctlCommandTests.userctl(socket + ["import", file]).status == 0)
        #expect(await text.printed { $0.contains("\(Self.me) imported 1 user (#") }, "text: \(text.out)")
        #expect(await json.printed { $0.contains(#""name":"imported""#) }, "json: \(json.out)")
        let line = try #require(json.out.split(separator: "\n").first { $0.contains(#""name":"imported""#) })
        let event = try JSONValue(parsing: String(line))
        #expect(event["screen"]?.stringValue == "session")
        #expect(event["payload"]?["count"]?.int64Value == 1)
        #expect(event["payload"]?["user"]?.stringValue == Self.me)
        #expect(event["payload"]?["first_entry"]?.int64Value == event["payload"]?["last_entry"]?.int64Value)

        let lines = #"{"name":"Bo Stdin","email":"bo.stdin@example.org"}"# + "\n"
            + #"{"name":"Cy Stdin","email":"cy@example.org"}"# + "\n"
        #expect(try Self.importFromStdin(socket, lines) == 0)
        #expect(await text.printed { $0.contains("\(Self.me) imported 2 users (#") }, "text: \(text.out)")
        #expect(await json.printed { $0.contains(#""count":2"#) }, "json: \(json.out)")

        // The other kinds still come one by one, after the imports.
        let list = try UserctlCommandTests.userctl(socket + ["list", "--json", "--page-size", "1"])
        let id = try #require(try JSONValue(parsing: list.stdout).arrayValue?.first?["id"]?.stringValue)
        #expect(try UserctlCommandTests.userctl(socket + ["rename", id, "Renamed Watcher"]).status == 0)
        #expect(await text.printed { $0.contains("saved") && $0.contains("Renamed Watcher") }, "text: \(text.out)")
        #expect(await json.printed { $0.contains(#""kind":"saved""#) }, "json: \(json.out)")
        #expect(text.out.components(separatedBy: "imported").count == 3, "each import once: \(text.out)")

        // Undoing an import is reported as what it is, not as a reload of unknown changes.
        let entries = json.out.split(separator: "\n").compactMap { line -> Int64? in
            let event = try? JSONValue(parsing: String(line))
            return event?["payload"]?["count"]?.int64Value == 2 ? event?["payload"]?["first_entry"]?.int64Value : nil
        }
        let stdinImport = try #require(entries.first, "\(json.out)")
        #expect(try UserctlCommandTests.userctl(socket + ["revert", String(stdinImport)]).status == 0)
        #expect(await text.printed { $0.contains("\(Self.me) undid import #\(stdinImport): 2 removed, 0 restored (#") },
                "text: \(text.out)")
        #expect(!text.out.contains("changed in bulk"), "text: \(text.out)")
    }
}
