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
    /// `userctl watch` in the background, its stdout and stderr in files read as they grow.
    final class Watcher {
        let process = Process()
        let outPath: String
        let errPath: String

        init(_ arguments: [String], directory: String, name: String) throws {
            let products = try #require(RealDaemon.productsDirectory)
            outPath = "\(directory)/\(name).out"
            errPath = "\(directory)/\(name).err"
            FileManager.default.createFile(atPath: outPath, contents: nil)
            FileManager.default.createFile(atPath: errPath, contents: nil)
            process.executableURL = URL(fileURLWithPath: products + "/userctl")
            process.arguments = arguments + ["watch"]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle(forWritingAtPath: outPath)
            process.standardError = FileHandle(forWritingAtPath: errPath)
            try process.run()
        }

        var out: String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }
        var err: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }

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

    @Test func importsFromAFileAndFromStdinAreReported() throws {
        let daemon = try RealDaemon(sampleData: 3)
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath]
        let json = try Watcher(socket + ["--json"], directory: daemon.directory, name: "json")
        defer { json.stop() }
        let text = try Watcher(socket, directory: daemon.directory, name: "text")
        defer { text.stop() }
        // "connected" comes once the watch reads where the history stands and follows changes.
        #expect(waitUntil {
                    json.out.contains(#"{"connection":"connected"}"#) && text.err.contains("userctl: connected")
                },
                "\(json.out) \(text.err)")

        let file = daemon.directory + "/one.json"
        try #"[{"name":"Ada File","email":"ada.file@example.org"}]"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try UserctlCommandTests.userctl(socket + ["import", file]).status == 0)
        #expect(waitUntil { text.out.contains("\(Self.me) imported 1 user (#") }, "text: \(text.out)")
        #expect(waitUntil { json.out.contains(#""name":"imported""#) }, "json: \(json.out)")
        let line = try #require(json.out.split(separator: "\n").first { $0.contains(#""name":"imported""#) })
        let event = try JSONValue(parsing: String(line))
        #expect(event["screen"]?.stringValue == "session")
        #expect(event["payload"]?["count"]?.int64Value == 1)
        #expect(event["payload"]?["user"]?.stringValue == Self.me)
        #expect(event["payload"]?["first_entry"]?.int64Value == event["payload"]?["last_entry"]?.int64Value)

        let lines = #"{"name":"Bo Stdin","email":"bo.stdin@example.org"}"# + "\n"
            + #"{"name":"Cy Stdin","email":"cy@example.org"}"# + "\n"
        #expect(try Self.importFromStdin(socket, lines) == 0)
        #expect(waitUntil { text.out.contains("\(Self.me) imported 2 users (#") }, "text: \(text.out)")
        #expect(waitUntil { json.out.contains(#""count":2"#) }, "json: \(json.out)")

        // The other kinds still come one by one, after the imports.
        let list = try UserctlCommandTests.userctl(socket + ["list", "--json", "--page-size", "1"])
        let id = try #require(try JSONValue(parsing: list.stdout).arrayValue?.first?["id"]?.stringValue)
        #expect(try UserctlCommandTests.userctl(socket + ["rename", id, "Renamed Watcher"]).status == 0)
        #expect(waitUntil { text.out.contains("saved") && text.out.contains("Renamed Watcher") }, "text: \(text.out)")
        #expect(waitUntil { json.out.contains(#""kind":"saved""#) }, "json: \(json.out)")
        #expect(text.out.components(separatedBy: "imported").count == 3, "each import once: \(text.out)")
    }
}
