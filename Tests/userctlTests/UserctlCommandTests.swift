import Foundation
import UserListTestSupport
import Testing
import UserListWire

/// The built `userctl` binary against a real `userlistd`: stdout, stderr and exit status.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)), .disabled(if: RealDaemon.skipReason != nil, "userlistd not built: swift build first"))
struct UserctlCommandTests {
    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    static func userctl(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        let products = try #require(RealDaemon.productsDirectory)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: products + "/userctl")
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "USERLISTD_SOCKET")
        env.merge(environment) { $1 }
        process.environment = env
        return try collect(process)
    }

    /// Runs `process` (no input) to its end and returns its status and both outputs.
    static func collect(_ process: Process) throws -> Run {
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                   stderr: String(decoding: stderr, as: UTF8.self))
    }

    @Test func listAllAsJSONHasEveryUser() throws {
        let daemon = try RealDaemon()
        defer { daemon.tearDown() }
        let run = try Self.userctl(["--socket", daemon.socketPath, "list", "--all", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let users = try #require(try JSONValue(parsing: run.stdout).arrayValue)
        #expect(users.count == 200)
        for key in ["id", "name", "email", "avatar_url", "version"] {
            #expect(users[0][key] != nil, "\(key)")
        }
        let page = try Self.userctl(["--socket", daemon.socketPath, "list", "--page-size", "7", "--json"])
        #expect(try JSONValue(parsing: page.stdout).arrayValue?.count == 7)
    }

    @Test func showRenameAndTheirFailures() throws {
        let daemon = try RealDaemon()
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath]
        let list = try Self.userctl(socket + ["list", "--json", "--page-size", "1"])
        let id = try #require(try JSONValue(parsing: list.stdout).arrayValue?.first?["id"]?.stringValue)

        let show = try Self.userctl(socket + ["show", id, "--json"])
        #expect(show.status == 0)
        #expect(try JSONValue(parsing: show.stdout)["id"]?.stringValue == id)
        let plain = try Self.userctl(socket + ["show", id])
        #expect(plain.stdout.contains("email:"))

        let rename = try Self.userctl(socket + ["rename", id, "Renée Nouveau", "--json"])
        #expect(rename.status == 0, "\(rename.stderr)")
        let renamed = try JSONValue(parsing: rename.stdout)
        #expect(renamed["name"]?.stringValue == "Renée Nouveau")
        #expect(renamed["version"]?.int64Value == 2)

        let invalid = try Self.userctl(socket + ["rename", id, "   "])
        #expect(invalid.status == 65)
        #expect(invalid.stderr.contains("cannot rename"))

        let unknown = try Self.userctl(socket + ["show", "00000000-0000-0000-0000-000000000000"])
        #expect(unknown.status == 65)
        let notAnID = try Self.userctl(socket + ["rename", "nope", "X"])
        #expect(notAnID.status == 65)
    }

    /// `userctl set` changes only the fields given (the others keep what someone else saved),
    /// removes the avatar with --no-avatar, honours --expected-version, and exits as `rename`.
    @Test func setChangesOnlyTheFieldsGiven() throws {
        let daemon = try RealDaemon(sampleData: 10)
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath]
        let list = try Self.userctl(socket + ["list", "--json", "--page-size", "1"])
        let user = try #require(try JSONValue(parsing: list.stdout).arrayValue?.first)
        let id = try #require(user["id"]?.stringValue)
        let name = try #require(user["name"]?.stringValue)

        let email = try Self.userctl(socket + ["set", id, "--email", "set.only@example.org", "--avatar-url", "https://a.example/x.png", "--json"])
        #expect(email.status == 0, "\(email.stderr)")
        let changed = try JSONValue(parsing: email.stdout)
        #expect(changed["email"]?.stringValue == "set.only@example.org")
        #expect(changed["avatar_url"]?.stringValue == "https://a.example/x.png")
        #expect(changed["name"]?.stringValue == name, "the name was not given: kept")
        #expect(changed["version"]?.int64Value == 2)

        // Someone renames it; a set of the email alone keeps their name.
        #expect(try Self.userctl(socket + ["rename", id, "Renamed Meanwhile"]).status == 0)
        let plain = try Self.userctl(socket + ["set", id, "--no-avatar", "--expected-version", "3"])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout.contains("\"Renamed Meanwhile\"") && plain.stdout.contains("no avatar") && plain.stdout.contains("version 4"), "\(plain.stdout)")
        let shown = try JSONValue(parsing: Self.userctl(socket + ["show", id, "--json"]).stdout)
        #expect(shown["name"]?.stringValue == "Renamed Meanwhile" && shown["email"]?.stringValue == "set.only@example.org")
        #expect(shown["avatar_url"] == .null, "--no-avatar removed it: \(shown)")

        // A stale version is a conflict (75) and changes nothing; an invalid field is 65.
        let stale = try Self.userctl(socket + ["set", id, "--name", "Too Late", "--expected-version", "2"])
        #expect(stale.status == 75, "\(stale.status) \(stale.stderr)")
        #expect(stale.stderr.contains("cannot change"), "\(stale.stderr)")
        #expect(try JSONValue(parsing: Self.userctl(socket + ["show", id, "--json"]).stdout)["name"]?.stringValue == "Renamed Meanwhile")
        let invalid = try Self.userctl(socket + ["set", id, "--email", "not an email"])
        #expect(invalid.status == 65, "\(invalid.stderr)")
        let unknown = try Self.userctl(socket + ["set", "00000000-0000-0000-0000-000000000000", "--name", "X"])
        #expect(unknown.status == 65, "\(unknown.stderr)")

        // Nothing to change, or both avatar options: usage errors (64), before any daemon call.
        let nothing = try Self.userctl(socket + ["set", id])
        #expect(nothing.status == 64 && nothing.stderr.contains("at least one of"), "\(nothing.stderr)")
        let both = try Self.userctl(socket + ["set", id, "--avatar-url", "https://a.example/y.png", "--no-avatar"])
        #expect(both.status == 64, "\(both.stderr)")
    }

    @Test func addImportExportRemove() throws {
        let daemon = try RealDaemon(sampleData: 10)
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath]
        let add = try Self.userctl(socket + ["add", "--name", "山田太郎", "--email", "taro@example.com", "--json"])
        #expect(add.status == 0, "\(add.stderr)")
        let id = try #require(try JSONValue(parsing: add.stdout)["id"]?.stringValue)

        let file = daemon.directory + "/import.json"
        try #"[{"id":"11111111-2222-3333-4444-555555555555","full_name":"Rest Person","email":"rest@example.com"}]"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let imported = try Self.userctl(socket + ["import", file])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try Self.userctl(socket + ["import", daemon.directory + "/missing.json"]).status == 66)

        let export = try Self.userctl(socket + ["export"])
        let users = try #require(try JSONValue(parsing: export.stdout).arrayValue)
        #expect(users.count == 12)

        #expect(try Self.userctl(socket + ["remove", id]).status == 0)
        let after = try Self.userctl(socket + ["export"])
        #expect(try JSONValue(parsing: after.stdout).arrayValue?.count == 11)
    }

    @Test func usageErrorsAndHelp() throws {
        let help = try Self.userctl(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("exit status"))
        #expect(help.stdout.contains("75  temporary failure"))
        let listHelp = try Self.userctl(["list", "--help"])
        #expect(listHelp.stdout.contains("--page-size N"))
        let unknown = try Self.userctl(["list", "--bogus"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("unknown option '--bogus'"))
        #expect(try Self.userctl(["frobnicate"]).status == 64)
        #expect(try Self.userctl(["list", "--page-size"]).status == 64)
    }

    @Test func unreachableDaemonExits69() throws {
        let run = try Self.userctl(["--socket", "/tmp/no-such-userlistd/sock", "list"])
        #expect(run.status == 69)
        #expect(run.stderr.contains("cannot connect"))
        let noSpawn = try Self.userctl(["--no-spawn", "status"], environment: ["XDG_RUNTIME_DIR": "/tmp/no-such-runtime-dir"])
        // As root the per-user socket is the system one; either way nothing answers and nothing starts.
        #expect(noSpawn.status == 69 || noSpawn.status == 0)
    }

    @Test func statusAndSessions() throws {
        let daemon = try RealDaemon(sampleData: 5)
        defer { daemon.tearDown() }
        let status = try Self.userctl(["--socket", daemon.socketPath, "status", "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(try JSONValue(parsing: status.stdout).objectValue != nil)
        let sessions = try Self.userctl(["--socket", daemon.socketPath, "sessions", "--json", "--session", "mine"])
        #expect(sessions.status == 0)
        #expect(sessions.stdout.contains("\"mine\""))
    }
}
