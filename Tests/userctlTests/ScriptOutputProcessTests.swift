import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire

/// Issue 48 item 2: what `userctl` writes to a pipe or a file is for scripts (every value whole,
/// no count and no colour on stdout); on a terminal it stays as people read it.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)),
       .disabled(if: RealDaemon.skipReason != nil, "userlistd not built: swift build first"))
struct ScriptOutputProcessTests {
    typealias Run = UserctlCommandTests.Run

    static let longName = "Maximiliana Esperanza Wolkenstein-Trostberg"
    static let longEmail = "maximiliana.esperanza.wolkenstein-trostberg@example.org"

    static func userctl(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        try UserctlCommandTests.userctl(arguments, environment: environment)
    }

    /// `userctl` with a terminal on stdin, stdout and stderr (`script` gives it a pty); both
    /// streams come back together, lines ending in "\r\n".
    static func onTerminal(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        let products = try #require(RealDaemon.productsDirectory)
        let command = ([products + "/userctl"] + arguments).map(shellQuoted).joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "USERLISTD_SOCKET")
        env.removeValue(forKey: "NO_COLOR")
        env["TERM"] = "xterm"
        env.merge(environment) { $1 }
        process.environment = env
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: data, as: UTF8.self), stderr: "")
    }

    static func shellQuoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    static func withLongUser(_ body: ([String]) throws -> Void) throws {
        let daemon = try RealDaemon(sampleData: 3)
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath]
        let add = try userctl(socket + ["add", "--name", longName, "--email", longEmail])
        try #require(add.status == 0, "\(add.stderr)")
        try body(socket)
    }

    @Test func aPipeGetsEveryValueWholeAndNoCount() throws {
        try Self.withLongUser { socket in
            for arguments in [["list"], ["list", "--all"], ["list", "--page-size", "2"]] {
                let run = try Self.userctl(socket + arguments)
                #expect(run.status == 0, "\(arguments): \(run.stderr)")
                if arguments.count == 1 || arguments[1] == "--all" {
                    let row = run.stdout.split(separator: "\n").first { $0.contains(Self.longEmail) }
                    #expect(row?.contains(Self.longName) == true, "\(arguments): the whole row: \(run.stdout)")
                }
                #expect(!run.stdout.contains("…"), "\(arguments): nothing cut: \(run.stdout)")
                let counts = run.stdout.split(separator: "\n")
                    .filter { $0.hasSuffix(" users") || $0.hasSuffix("--all)") }
                #expect(counts.isEmpty, "\(arguments): no count on stdout: \(run.stdout)")
                #expect(!run.stdout.contains("\u{1B}"), "\(arguments): no colour")
                #expect(run.stderr.contains(" users"), "\(arguments): the count goes to stderr: \(run.stderr)")
            }
            let two = try Self.userctl(socket + ["list", "--page-size", "2"])
            #expect(two.stderr == "2 of 4 users (more: --all)\n", "\(two.stderr)")
            #expect(two.stdout.split(separator: "\n").count == 3, "a header and two rows: \(two.stdout)")
            for arguments in [["status"], ["sessions"]] {
                let run = try Self.userctl(socket + arguments)
                #expect(run.status == 0 && !run.stdout.contains("\u{1B}") && !run.stdout.contains("…"),
                        "\(arguments): \(run)")
            }
        }
    }

    @Test func aTerminalStillGetsAFittedTableAndItsCount() throws {
        try Self.withLongUser { socket in
            let run = try Self.onTerminal(socket + ["list"])
            #expect(run.status == 0, "\(run.stdout)")
            #expect(run.stdout.contains("…"), "long values are cut to fit: \(run.stdout)")
            #expect(run.stdout.contains("4 users"), "the count ends the table: \(run.stdout)")
            #expect(run.stdout.contains("\u{1B}[1m"), "the header is bold: \(run.stdout.debugDescription)")
            for arguments in [["list"], ["list", "--all"], ["status"], ["sessions"], ["history"]] {
                let plain = try Self.onTerminal(socket + arguments, environment: ["NO_COLOR": "1"])
                #expect(plain.status == 0 && !plain.stdout.contains("\u{1B}["),
                        "NO_COLOR: \(plain.stdout.debugDescription)")
            }
        }
    }

    /// An import from standard input (`import -`) names it "stdin" in its errors, not "-".
    @Test func anImportErrorFromStandardInputSaysStdin() throws {
        let daemon = try RealDaemon(sampleData: 0)
        defer { daemon.tearDown() }
        let products = try #require(RealDaemon.productsDirectory)
        for (third, why) in [(#"{"name": "C", "email": "not an email"}"#, "invalid"), (#"{"name": "C"}"#, "no")] {
            let file = daemon.directory + "/users-\(why).json"
            let users = #"[{"name": "A", "email": "a@example.org"}, {"name": "B", "email": "b@example.org"}, "#
            try Data((users + third + "]").utf8).write(to: URL(fileURLWithPath: file))
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            let command = [products + "/userctl", "--socket", daemon.socketPath, "import", "-", "--quiet"]
            let line = command.map(Self.shellQuoted).joined(separator: " ") + " < " + Self.shellQuoted(file)
            process.arguments = ["-c", line]
            let run = try UserctlCommandTests.collect(process)
            #expect(run.status == 65, "\(run.stderr)")
            #expect(run.stderr.hasPrefix("userctl: stdin: "), "\(run.stderr)")
            #expect(run.stderr.lowercased().contains("entry 3"), "\(run.stderr)")
            #expect(!run.stderr.contains("-:"), "\(run.stderr)")
        }
    }
}
