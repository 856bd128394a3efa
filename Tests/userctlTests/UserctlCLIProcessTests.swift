import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire
@testable import userctl

/// The built `userctl` as people and scripts meet it (issue 14 item 6, issue 11 items 1 and 4):
/// stdout, stderr and exit status of help, version, did-you-mean, tables, completion, exact
/// messages, escaped names, and refusing a runtime directory that is not the user's.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(2)), .disabled(if: RealDaemon.skipReason != nil, "userlistd not built: swift build first"))
struct UserctlCLIProcessTests {
    typealias Run = UserctlCommandTests.Run

    static func userctl(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        try UserctlCommandTests.userctl(arguments, environment: environment)
    }

    static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { TerminalText.isUnsafe($0) && $0 != "\n" }
    }

    @Test func helpAndVersionNeedNoDaemon() throws {
        // A runtime directory that does not exist and --no-spawn: nothing may be started.
        let offline = ["XDG_RUNTIME_DIR": "/tmp/ulct-none-\(getpid())"]
        let version = try Self.userctl(["--version"], environment: offline)
        #expect(version.status == 0 && version.stdout == "userctl \(Help.version)\n" && version.stderr.isEmpty, "\(version)")

        let help = try Self.userctl(["help"], environment: offline)
        let dashHelp = try Self.userctl(["--help"], environment: offline)
        #expect(help.status == 0 && help.stdout == dashHelp.stdout, "'help' and '--help' print the same")
        for text in ["finding the daemon", DaemonLocator.discoveryText.components(separatedBy: "\n")[3].trimmingCharacters(in: .whitespaces),
                     "completion", "exit status"] {
            #expect(help.stdout.contains(text), "--help mentions \(text)")
        }
        let renameHelp = try Self.userctl(["help", "rename"], environment: offline)
        let renameDashHelp = try Self.userctl(["rename", "--help"], environment: offline)
        #expect(renameHelp.status == 0 && renameHelp.stdout == renameDashHelp.stdout)
        #expect(renameHelp.stdout.hasPrefix("usage: userctl rename ID NAME"))

        let typo = try Self.userctl(["help", "renam"], environment: offline)
        #expect(typo.status == 64 && typo.stderr.contains("did you mean 'rename'?"), "\(typo)")
    }

    /// Every option of every command's help stands apart from its text (`--expected-version V`
    /// and `--force-skip-changed` filled the column and were glued to it), as in the man page.
    @Test func everyOptionInHelpIsApartFromItsText() throws {
        let option = /^  (-\S, )?--[a-z-]+( [A-Z]+)?  +\S.*/
        for command in Help.commands.map(\.name) {
            let help = try Self.userctl(["help", command])
            for line in help.stdout.split(separator: "\n") where line.hasPrefix("  -") {
                #expect(line.wholeMatch(of: option) != nil, "\(command): \(line)")
            }
        }
        let root = #filePath.components(separatedBy: "/Tests/")[0]
        let page = try String(contentsOfFile: root + "/man/userctl.1", encoding: .utf8)
        #expect(!page.contains("version Vchange") && !page.contains("changedundo"), "the man page too")
    }

    @Test func typosGetADidYouMean() throws {
        let command = try Self.userctl(["lst"])
        #expect(command.status == 64)
        #expect(command.stderr == "userctl: unknown command 'lst'; did you mean 'list'?\n(see 'userctl --help')\n", "\(command.stderr)")
        let option = try Self.userctl(["add", "--nmae", "X"])
        #expect(option.status == 64)
        #expect(option.stderr.contains("unknown option '--nmae' for 'userctl add'; did you mean '--name'?"), "\(option.stderr)")
        let global = try Self.userctl(["--sesion", "k", "status"])
        #expect(global.status == 64 && global.stderr.contains("did you mean '--session'?"), "\(global.stderr)")
        #expect(command.stdout.isEmpty && option.stdout.isEmpty)
    }

    @Test func completionScriptsForThreeShells() throws {
        let bash = try Self.userctl(["completion", "bash"])
        #expect(bash.status == 0 && bash.stdout.contains("complete -F _userctl userctl"))
        for command in Help.commands.map(\.name) {
            #expect(bash.stdout.contains(command), "bash completes \(command)")
        }
        let file = "/tmp/ulct-completion-\(getpid()).bash"
        defer { unlink(file) }
        try bash.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        if FileManager.default.isExecutableFile(atPath: "/bin/bash") {
            let syntax = try TUIHarness.run("/bin/bash", ["-n", file])
            #expect(syntax.status == 0, "bash accepts the script: \(syntax.output)")
        }
        let zsh = try Self.userctl(["completion", "zsh"])
        #expect(zsh.status == 0 && zsh.stdout.hasPrefix("#compdef userctl") && zsh.stdout.contains("'sessions:list the daemon"))
        let fish = try Self.userctl(["completion", "fish"])
        #expect(fish.status == 0
                && fish.stdout.contains("complete -c userctl -n '__fish_seen_subcommand_from list ls' -l page-size -r"))
        let other = try Self.userctl(["completion", "tcsh"])
        #expect(other.status == 64 && other.stderr.contains("shells: bash, zsh, fish"))
    }

    @Test func sessionsAndStatusAreAlignedTables() throws {
        let daemon = try RealDaemon(sampleData: 5)
        defer { daemon.tearDown() }
        let sessions = try Self.userctl(["--socket", daemon.socketPath, "--session", "table-key", "sessions"])
        #expect(sessions.status == 0, "\(sessions.stderr)")
        let lines = sessions.stdout.split(separator: "\n").map(String.init)
        let header = try #require(lines.first)
        #expect(header.hasPrefix("USER") && header.contains("CLIENTS") && header.contains("ACCESS")
                && header.hasSuffix("ID"), "\(header)")
        let row = try #require(lines.first { $0.contains(" table-key ") }, "\(lines)")
        let idColumn = try #require(header.range(of: "ID", options: .backwards)).lowerBound.utf16Offset(in: header)
        #expect(row.count > idColumn && row[row.index(row.startIndex, offsetBy: idColumn - 2)..<row.index(row.startIndex, offsetBy: idColumn)] == "  ",
                "the id column starts where its header does: \(header) / \(row)")
        #expect(row.contains("read-write"))
        let json = try Self.userctl(["--socket", daemon.socketPath, "--session", "table-key", "sessions", "--json"])
        #expect(try JSONValue(parsing: json.stdout).arrayValue?.contains { $0["key"]?.stringValue == "table-key" } == true, "--json unchanged")

        let status = try Self.userctl(["--socket", daemon.socketPath, "status"])
        #expect(status.status == 0)
        let statusLines = status.stdout.split(separator: "\n").map(String.init)
        #expect(statusLines.first?.hasPrefix("FIELD") == true && statusLines.first?.hasSuffix("VALUE") == true, "\(statusLines)")
        #expect(statusLines.contains { $0.hasPrefix("socket ") && $0.hasSuffix(daemon.socketPath) }, "\(statusLines)")
        let valueColumn = statusLines[0].range(of: "VALUE")!.lowerBound.utf16Offset(in: statusLines[0])
        #expect(statusLines.dropFirst().allSatisfy { $0.count > valueColumn && $0[$0.index($0.startIndex, offsetBy: valueColumn - 1)] == " " && $0[$0.index($0.startIndex, offsetBy: valueColumn)] != " " },
                "values line up: \(statusLines)")
    }

    @Test func exactMessagesForAnUnknownIdAndAFileThatIsNoSocket() throws {
        let daemon = try RealDaemon(sampleData: 5)
        defer { daemon.tearDown() }
        let zero = "00000000-0000-0000-0000-000000000000"
        let unknown = try Self.userctl(["--socket", daemon.socketPath, "show", zero])
        #expect(unknown.status == 65 && unknown.stderr == "userctl: no user with id \(zero)\n", "\(unknown.stderr)")

        let file = daemon.directory + "/notes.txt"
        try "notes".write(toFile: file, atomically: true, encoding: .utf8)
        let notSocket = try Self.userctl(["--socket", file, "status"])
        #expect(notSocket.status == 69)
        #expect(notSocket.stderr == "userctl: cannot connect to \(file): it is a regular file, not a socket\n", "\(notSocket.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "notes")

        let nothing = daemon.directory + "/no-daemon.sock"
        let unreachable = try Self.userctl(["--socket", nothing, "status"])
        #expect(unreachable.status == 69)
        #expect(unreachable.stderr == "userctl: cannot connect to \(nothing): No such file or directory (is userlistd running? systemctl start userlistd.socket)\n", "\(unreachable.stderr)")
    }

    /// `set` and `rename` of what is stored already: the daemon says `unchanged` (no new
    /// version), and userctl says nothing changed, exits 0, and keeps `unchanged` in `--json`.
    @Test func setAndRenameOfWhatIsStoredSayNothingChanged() throws {
        let daemon = try RealDaemon(sampleData: 3)
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath]
        let first = try JSONValue(parsing: Self.userctl(socket + ["list", "--json"]).stdout).arrayValue?.first
        let id = try #require(first?["id"]?.stringValue), name = try #require(first?["name"]?.stringValue)
        let email = try #require(first?["email"]?.stringValue)
        let set = try Self.userctl(socket + ["set", id, "--email", email])
        #expect(set.status == 0 && set.stdout.hasPrefix("unchanged: \(id) already has "), "\(set)")
        #expect(set.stdout.contains("(version 1)") && !set.stdout.contains("changed \(id)"), "\(set)")
        let rename = try Self.userctl(socket + ["rename", id, name])
        #expect(rename.status == 0 && rename.stdout.hasPrefix("unchanged: \(id) is already named "), "\(rename)")
        for command in [["set", id, "--name", name], ["rename", id, name]] {
            let json = try Self.userctl(socket + command + ["--json"])
            let reply = try JSONValue(parsing: json.stdout)
            #expect(json.status == 0 && reply["unchanged"] == true && reply["version"] == 1, "\(command): \(json)")
        }
        let changed = try Self.userctl(socket + ["set", id, "--name", name + " Changed", "--json"])
        #expect(try JSONValue(parsing: changed.stdout)["unchanged"] == nil, "a change says no such thing: \(changed)")
    }

    /// A stored name with an escape sequence and a bidi override, through `list`, `show` and
    /// `--json`. When the daemon refuses such names (the Domain rule of issue 11), the refusal
    /// itself must reach the terminal escaped.
    @Test func hostileNamesReachTheTerminalEscaped() throws {
        let daemon = try RealDaemon(sampleData: 3)
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath]
        let id = try #require(try JSONValue(parsing: Self.userctl(socket + ["list", "--json"]).stdout).arrayValue?.first?["id"]?.stringValue)
        let hostile = "A\u{1B}]0;PWNED\u{07}\u{1B}[2J\u{202E}cba"
        let rename = try Self.userctl(socket + ["rename", id, hostile])
        #expect(!Self.hasControl(rename.stdout) && !Self.hasControl(rename.stderr), "\(rename)")
        guard rename.status == 0 else {
            #expect(rename.status == 65, "refused as invalid: \(rename)")
            return
        }
        // `list` cuts names at 32 columns, so it shows the start of the escaped name.
        for (arguments, shown) in [(["list"], #"A\x1b]0;PWNED\x07\x1b[2J"#), (["show", id], #"A\x1b]0;PWNED\x07\x1b[2J\u202ecba"#)] {
            let run = try Self.userctl(socket + arguments)
            #expect(run.status == 0)
            #expect(!Self.hasControl(run.stdout), "\(arguments): \(run.stdout.debugDescription)")
            #expect(run.stdout.contains(shown), "\(arguments): \(run.stdout)")
        }
        let json = try Self.userctl(socket + ["show", id, "--json"])
        #expect(!Self.hasControl(json.stdout) && json.stdout.contains(#"\u202e"#), "\(json.stdout)")
        #expect(try JSONValue(parsing: json.stdout)["name"]?.stringValue == hostile)
    }

    // MARK: the runtime directory (issue 11, item 1)

    /// A listening socket at `directory/userlistd.sock`, as an attacker's fake daemon would be.
    final class Listener {
        let fd: Int32
        init(directory: String) throws {
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let path = Array((directory + "/userlistd.sock").utf8)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: path); raw[path.count] = 0 }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard bound == 0, listen(fd, 8) == 0 else { throw RealDaemon.Failure("cannot listen in \(directory)") }
        }
        /// Whether anyone connected.
        var wasContacted: Bool {
            let client = accept(fd, nil, nil)
            if client >= 0 { close(client); return true }
            return false
        }
        deinit { close(fd) }
    }

    static let systemDaemonAnswers = UnixProbe.answers(path: DaemonLocator.systemSocket)

    @Test(.disabled(if: systemDaemonAnswers, "a system userlistd answers, and discovery would use it first"))
    func aSymlinkedRuntimeDirectoryIsRefused() throws {
        let base = "/tmp/ulct-rt-" + String(UUID().uuidString.prefix(8))
        try FileManager.default.createDirectory(atPath: base + "/real", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        chmod(base + "/real", 0o700)
        let listener = try Listener(directory: base + "/real")
        try FileManager.default.createSymbolicLink(atPath: base + "/link", withDestinationPath: base + "/real")
        let run = try Self.userctl(["--no-spawn", "status"], environment: ["XDG_RUNTIME_DIR": base + "/link"])
        #expect(run.status == 69)
        #expect(run.stderr.contains("\(base)/link is a symbolic link") && run.stderr.contains("Fix:"), "\(run.stderr)")
        #expect(!listener.wasContacted, "userctl never connected through the link")
    }

    @Test(.enabled(if: getuid() == 0, "needs root to hand a directory to another uid (chown nobody)"),
          .disabled(if: systemDaemonAnswers, "a system userlistd answers, and discovery would use it first"))
    func aRuntimeDirectoryOwnedByAnotherUserIsRefused() throws {
        let planted = "/tmp/ulct-rt-" + String(UUID().uuidString.prefix(8))
        try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: planted) }
        chmod(planted, 0o700)
        let listener = try Listener(directory: planted)
        #expect(chown(planted, 65534, 65534) == 0)
        for arguments in [["--no-spawn", "status"], ["status"]] {
            let run = try Self.userctl(arguments, environment: ["XDG_RUNTIME_DIR": planted])
            #expect(run.status == 69, "\(arguments): \(run)")
            #expect(run.stderr.contains("\(planted) belongs to uid 65534") && run.stderr.contains("will not use it"), "\(run.stderr)")
        }
        #expect(!listener.wasContacted, "the other user's socket was never contacted")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: planted)) == ["userlistd.sock"], "no daemon was started there")
    }
}
