import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire

/// Issue 48 item 4: errors in the user's words (the action, the group, how to join it; no
/// intent names), and with `--json` one JSON object on stderr, exit codes unchanged.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)),
       .disabled(if: RealDaemon.skipReason != nil, "userlistd not built: swift build first"))
struct UserWordsProcessTests {
    typealias Run = UserctlCommandTests.Run

    static let asRoot: Comment = "needs root to run userctl as nobody (setpriv)"

    /// The built userctl run as nobody (with no supplementary groups), its output collected.
    static func asNobody(_ arguments: [String], stdinPath: String? = nil) throws -> Run {
        let products = try #require(RealDaemon.productsDirectory)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", products + "/userctl"] + arguments
        process.environment = ["PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "LANG": "C.UTF-8"]
        return try UserctlCommandTests.collect(process)
    }

    /// A daemon whose directory nobody may pass through and whose socket everyone may use.
    static func openDaemon(_ socketMode: String, group: String? = nil) throws -> RealDaemon {
        let daemon = try RealDaemon(sampleData: 3, extraArguments: ["--socket-mode", socketMode]
                                    + (group.map { ["--socket-group", $0] } ?? []))
        chmod(daemon.directory, 0o711)
        return daemon
    }

    static func jsonError(_ run: Run) throws -> JSONValue {
        let lines = run.stderr.split(separator: "\n")
        try #require(lines.count == 1, "one line on stderr: \(run.stderr)")
        return try #require(try JSONValue(parsing: String(lines[0]))["error"], "\(run.stderr)")
    }

    @Test func jsonErrorsAreOneObjectOnStderr() throws {
        let usage = try UserctlCommandTests.userctl(["frobnicate", "--json"])
        #expect(usage.status == 64 && usage.stdout.isEmpty)
        let error = try Self.jsonError(usage)
        #expect(error["code"]?.stringValue == "usage" && error["status"]?.int64Value == 64, "\(error)")
        #expect(error["message"]?.stringValue?.contains("unknown command 'frobnicate'") == true, "\(error)")

        let unreachable = try UserctlCommandTests.userctl(["--json", "--socket", "/tmp/no-such-userlistd/sock",
                                                           "status"])
        #expect(unreachable.status == 69)
        #expect(try Self.jsonError(unreachable)["code"]?.stringValue == "unavailable")

        let daemon = try RealDaemon(sampleData: 3)
        defer { daemon.tearDown() }
        let invalid = try UserctlCommandTests.userctl(["--socket", daemon.socketPath, "add", "--name", " ",
                                                       "--email", "nobody@example.org", "--json"])
        #expect(invalid.status == 65 && invalid.stdout.isEmpty)
        #expect(try Self.jsonError(invalid)["code"]?.stringValue == "validation",
                "the daemon's code: \(invalid.stderr)")
    }

    /// `set` and `revert` say the daemon's code as `rename` and `add` do: `validation` for a bad
    /// email, `conflict` for a version overtaken (not `invalid_data`, `try_again`).
    @Test func everyCommandSaysTheDaemonsCode() throws {
        let daemon = try RealDaemon(sampleData: 3)
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath, "--json"]
        let list = try UserctlCommandTests.userctl(socket + ["list"])
        let id = try #require(try JSONValue(parsing: list.stdout).arrayValue?.first?["id"]?.stringValue)
        func code(_ arguments: [String], status: Int32) throws -> String? {
            let run = try UserctlCommandTests.userctl(socket + arguments)
            #expect(run.status == status, "\(arguments): \(run)")
            return try Self.jsonError(run)["code"]?.stringValue
        }
        #expect(try code(["rename", id, ""], status: 65) == "validation")
        #expect(try code(["set", id, "--email", "not an email"], status: 65) == "validation")
        #expect(try UserctlCommandTests.userctl(socket + ["rename", id, "Renamed Once"]).status == 0)
        #expect(try UserctlCommandTests.userctl(socket + ["rename", id, "Renamed Twice"]).status == 0)
        #expect(try code(["set", id, "--name", "Late", "--expected-version", "1"], status: 75) == "conflict")
        let history = try UserctlCommandTests.userctl(socket + ["history", id])
        let entries = try #require(try JSONValue(parsing: history.stdout).arrayValue, "\(history)")
        let older = entries.compactMap { $0["entry"]?.int64Value }.min() ?? 0
        #expect(try code(["revert", String(older)], status: 75) == "conflict", "the user changed since")
    }

    @Test(.enabled(if: getuid() == 0, asRoot))
    func aReadOnlyRefusalNamesTheActionTheGroupAndHowToJoin() throws {
        let daemon = try Self.openDaemon("0666")
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath]
        let list = try UserctlCommandTests.userctl(socket + ["list", "--json"])
        let id = try #require(try JSONValue(parsing: list.stdout).arrayValue?.first?["id"]?.stringValue)

        let rename = try Self.asNobody(socket + ["rename", id, "Not Allowed"])
        #expect(rename.status == 77, "\(rename)")
        #expect(rename.stderr.contains("renaming a user needs root or membership of the group 'userlistd'"),
                "\(rename.stderr)")
        #expect(rename.stderr.contains("Ask an admin: usermod -aG userlistd nobody"), "\(rename.stderr)")
        #expect(!rename.stderr.contains("rename_user"), "no intent names: \(rename.stderr)")

        let file = daemon.directory + "/one.json"
        try #"[{"name":"Ada Denied","email":"ada.denied@example.org"}]"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o644)
        let imported = try Self.asNobody(socket + ["import", file])
        #expect(imported.status == 77, "\(imported)")
        #expect(imported.stderr.contains("importing users needs")
                && imported.stderr.hasSuffix(" Nothing was imported.\n"),
                "\(imported.stderr)")
        #expect(!imported.stderr.contains(".;") && !imported.stderr.contains("import_begin"), "\(imported.stderr)")

        let json = try Self.asNobody(socket + ["remove", id, "--json"])
        #expect(json.status == 77)
        let error = try Self.jsonError(json)
        #expect(error["code"]?.stringValue == "read_only" && error["status"]?.int64Value == 77, "\(error)")
        let set = try Self.asNobody(socket + ["set", id, "--name", "Not Allowed", "--json"])
        let setCode = try Self.jsonError(set)["code"]?.stringValue
        #expect(set.status == 77 && setCode == "read_only", "as rename: \(set)")

        let status = try Self.asNobody(socket + ["status"])
        #expect(status.status == 77)
        #expect(status.stderr.contains("members of the group 'userlistd' may see the daemon's status")
                && status.stderr.contains("usermod -aG userlistd nobody"), "\(status.stderr)")
    }

    @Test(.enabled(if: getuid() == 0, asRoot), .enabled(if: getgrnam("users") != nil, "needs the group 'users'"))
    func aSocketClosedToYouNamesItsGroup() throws {
        let daemon = try Self.openDaemon("0660", group: "users")
        defer { daemon.tearDown() }
        let run = try Self.asNobody(["--socket", daemon.socketPath, "status"])
        #expect(run.status == 69, "\(run)")
        #expect(run.stderr.contains("permission denied: the socket is owned by root, group users, mode 0660"),
                "\(run.stderr)")
        #expect(run.stderr.contains("Ask an admin: usermod -aG users nobody"), "\(run.stderr)")
    }
}
