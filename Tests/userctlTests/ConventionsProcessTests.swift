import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire

/// Issue 48 item 7: the conventions people bring from other tools: aliases (`ls`, `rm`,
/// `delete`), one-letter options (`-n`, `-j`), an email wherever an id goes, 4 characters at
/// least of an id for a removal, required options shown as such, per-command help that points
/// to `--help` for the global options, and completion of ids and emails from the daemon.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)),
       .disabled(if: RealDaemon.skipReason != nil, "userlistd not built: swift build first"))
struct ConventionsProcessTests {
    typealias Run = UserctlCommandTests.Run

    static func userctl(_ arguments: [String]) throws -> Run { try UserctlCommandTests.userctl(arguments) }

    static func users(_ socket: [String]) throws -> [UserRowJSON] {
        let run = try userctl(socket + ["list", "--json"])
        return (try JSONValue(parsing: run.stdout).arrayValue ?? []).compactMap { value in
            guard let id = value["id"]?.stringValue, let email = value["email"]?.stringValue else { return nil }
            return UserRowJSON(id: id, email: email, name: value["name"]?.stringValue ?? "")
        }
    }

    struct UserRowJSON { let id: String; let email: String; let name: String }

    @Test func aliasesAndOneLetterOptions() throws {
        let daemon = try RealDaemon(sampleData: 12)
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath]
        for arguments in [["ls", "-n", "3", "-j"], ["list", "-n3", "--json"], ["-j", "ls", "--page-size=3"]] {
            let run = try Self.userctl(socket + arguments)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            #expect(try JSONValue(parsing: run.stdout).arrayValue?.count == 3, "\(arguments): \(run.stdout)")
        }
        let unknown = try Self.userctl(["list", "-x"])
        #expect(unknown.status == 64 && unknown.stderr.contains("one-letter options: -j, -n"), "\(unknown.stderr)")

        let all = try Self.users(socket)
        let rm = try Self.userctl(socket + ["rm", String(all[0].id.prefix(8))])
        #expect(rm.status == 0 && rm.stdout == "removed \(all[0].id)\n", "\(rm)")
        let delete = try Self.userctl(socket + ["delete", all[1].id])
        #expect(delete.status == 0, "\(delete)")
        #expect(try Self.users(socket).count == 10)

        let help = try Self.userctl(["--help"])
        #expect(help.stdout.contains("list users (also: ls)")
                && help.stdout.contains("remove a user (also: rm, delete)"),
                "\(help.stdout)")
        #expect(help.stdout.contains("-j, --json") && help.stdout.contains("machine-readable"), "\(help.stdout)")
        let deleteHelp = try Self.userctl(["help", "delete"])
        #expect(deleteHelp.status == 0 && deleteHelp.stdout.hasPrefix("usage: userctl remove ID"), "\(deleteHelp)")
        #expect(try Self.userctl(["list", "--help"]).stdout.contains("-n, --page-size N"))
    }

    @Test func anEmailNamesAUserAndARemovalWantsFourCharacters() throws {
        let daemon = try RealDaemon(sampleData: 12)
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath]
        let all = try Self.users(socket)
        let show = try Self.userctl(socket + ["show", all[0].email.uppercased(), "--json"])
        #expect(show.status == 0, "\(show.stderr)")
        #expect(try JSONValue(parsing: show.stdout)["id"]?.stringValue == all[0].id)
        let rename = try Self.userctl(socket + ["rename", all[1].email, "Named By Email"])
        #expect(rename.status == 0 && rename.stdout.contains(all[1].id), "\(rename)")
        let nobody = try Self.userctl(socket + ["show", "nobody@nowhere.example"])
        #expect(nobody.status == 65 && nobody.stderr == "userctl: no user has the email nobody@nowhere.example\n",
                "\(nobody)")

        let short = try Self.userctl(socket + ["remove", String(all[2].id.prefix(3))])
        #expect(short.status == 64, "\(short)")
        #expect(short.stderr.contains("too short a start of an id to remove a user: give at least 4 characters"),
                "\(short)")
        #expect(try Self.users(socket).count == 12, "nothing was removed")
        let byEmail = try Self.userctl(socket + ["remove", all[2].email])
        #expect(byEmail.status == 0 && byEmail.stdout == "removed \(all[2].id)\n", "\(byEmail)")
    }

    @Test func usageShowsWhatIsRequiredAndHelpKeepsToTheCommand() throws {
        let add = try Self.userctl(["add", "--help"])
        #expect(add.stdout.hasPrefix("usage: userctl add --name NAME --email EMAIL [--avatar-url URL]\n"),
                "\(add.stdout)")
        // A socket nobody listens on: were the option not checked first, no daemon would be started for it.
        let missing = try Self.userctl(["--socket", "/nonexistent/userlistd.sock", "add", "--name", "Only A Name"])
        #expect(missing.status == 64 && missing.stderr.hasPrefix("userctl: 'userctl add' needs --email EMAIL"),
                "\(missing)")
        let rename = try Self.userctl(["rename", "--help"])
        #expect(!rename.stdout.contains("leaves the mouse to the terminal"),
                "no global option described again: \(rename.stdout)")
        #expect(rename.stdout.contains("--json (-j)") && rename.stdout.contains("see 'userctl --help'"),
                "\(rename.stdout)")
    }

    /// The bash script, run by bash with the built userctl first on PATH: what Tab offers.
    static func bashCompletes(_ words: [String], products: String) throws -> [String] {
        let script = try Self.userctl(["completion", "bash"]).stdout
        let file = "/tmp/ulct-complete-\(getpid()).bash"
        defer { unlink(file) }
        try (script + """
            COMP_WORDS=(\(words.map { "'\($0)'" }.joined(separator: " ")))
            COMP_CWORD=\(words.count - 1)
            _userctl
            printf '%s\\n' "${COMPREPLY[@]}"

            """).write(toFile: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [file]
        process.environment = ["PATH": products + ":/usr/bin:/bin", "HOME": "/nonexistent",
                               "XDG_RUNTIME_DIR": "/tmp/ulct-complete-none-\(getpid())"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/bin/bash"), "needs bash"))
    func completionOffersIdsAndEmailsFromTheDaemon() throws {
        let products = try #require(RealDaemon.productsDirectory)
        let daemon = try RealDaemon(sampleData: 12)
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath]
        let user = try #require(try Self.users(socket).first)
        let byEmail = try Self.bashCompletes(["userctl", "--socket", daemon.socketPath, "show",
                                              String(user.email.prefix(4))],
                                             products: products)
        #expect(byEmail.contains(user.email), "\(byEmail)")
        let byID = try Self.bashCompletes(["userctl", "--socket", daemon.socketPath, "rm", String(user.id.prefix(5))],
                                          products: products)
        #expect(byID.contains(user.id), "\(byID)")
        let nothing = try Self.bashCompletes(["userctl", "--socket", daemon.directory + "/none.sock", "show", "a"],
                                             products: products)
        #expect(nothing.allSatisfy { $0.isEmpty }, "quietly nothing when no daemon answers: \(nothing)")
        for shell in ["zsh", "fish"] {
            let script = try Self.userctl(["completion", shell]).stdout
            #expect(script.contains("__complete-users"), "\(shell)")
        }
    }
}
