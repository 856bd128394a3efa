import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire
@testable import userctl

/// Streamed import and export through the built `userctl` against a real daemon (issue 13):
/// a round trip of 20,000 users compared user by user, idempotence and the version bump, and the
/// all-or-nothing rules (issue 29) for Ctrl-C, `kill -9` of userctl and `kill -9` of the daemon
/// while the file is being staged, and for an invalid entry. The 1M-user round trip runs in `scripts/bulk-soak.sh`.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(10)), .disabled(if: RealDaemon.skipReason != nil, "userlistd not built: swift build first"))
struct BulkImportExportProcessTests {
    typealias Run = UserctlCommandTests.Run

    static func userctl(_ arguments: [String]) throws -> Run {
        try UserctlCommandTests.userctl(arguments)
    }

    /// Deterministic users with accents, CJK and varied lengths, in the REST shape.
    static func users(_ count: Int, seed: Int = 1, tag: String = "") -> [[String: Any]] {
        let first = ["Ada", "Émile", "Zoë", "李", "Alan", "Grace", "Renée", "Bob", "山田", "José", "Ωmega", "Łukasz"]
        let last = ["Lovelace", "Turing", "Hopper", "Zola", "明", "Brenée", "Stone", "太郎", "Nguyễn"]
        return (0..<count).map { i in
            let n = i &* 2_654_435_761 &+ seed
            let id = String(format: "%08x-%04x-4%03x-8%03x-%012x", i, seed & 0xffff, (n >> 4) & 0xfff, n & 0xfff, i &* 7919)
            return ["id": id, "full_name": "\(first[abs(n) % first.count]) \(last[abs(n / 7) % last.count])\(tag) \(i)",
                    "email": "user\(i).\(seed)@example\(i % 7).org", "avatar_url": i % 3 == 0 ? NSNull() : "https://a.example.com/\(i).png",
                    "version": 1]
        }
    }

    static func write(_ users: [[String: Any]], to path: String) throws {
        let data = try JSONSerialization.data(withJSONObject: users)
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// Canonical lines (id, name, email, avatar) sorted by id: equal sets of users, equal lines.
    static func canonical(file users: [[String: Any]]) -> [String] {
        users.map { "\($0["id"]!)|\($0["full_name"]!)|\($0["email"]!)|\(($0["avatar_url"] as? String) ?? "null")" }.sorted()
    }

    static func canonical(export text: String) throws -> [String] {
        let array = try #require(try JSONValue(parsing: text).arrayValue)
        return array.map { user in
            "\(user["id"]?.stringValue ?? "?")|\(user["name"]?.stringValue ?? "?")|\(user["email"]?.stringValue ?? "?")|\(user["avatar_url"]?.stringValue ?? "null")"
        }.sorted()
    }

    /// How many users the store holds, as `userctl list` reports it ("1 of N users").
    static func storedCount(_ socket: String) throws -> Int? {
        let run = try userctl(["--socket", socket, "list", "--page-size", "1"])
        // The count goes to stderr when stdout is not a terminal (issue 48 item 2).
        guard run.status == 0, let line = run.stderr.split(separator: "\n").last,
              let range = line.range(of: #"of (\d+) users"#, options: .regularExpression) else { return nil }
        return Int(line[range].dropFirst(3).prefix { $0.isNumber })
    }

    static func startUserctl(_ arguments: [String]) throws -> (Process, Pipe) {
        let products = try #require(RealDaemon.productsDirectory)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: products + "/userctl")
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "USERLISTD_SOCKET")
        process.environment = env
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return (process, err)
    }

    @Test func aStreamedImportExportsTheSameUsersAndAReimportChangesNothing() throws {
        let daemon = try RealDaemon(sampleData: 0)
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath]
        let users = Self.users(20_000)
        let file = daemon.directory + "/users.json"
        try Self.write(users, to: file)

        let imported = try Self.userctl(socket + ["import", file])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout == "imported 20000 users from \(file)\n")
        // Not a terminal: progress, if the import lasted long enough for any, is plain lines.
        #expect(imported.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("userctl: import: ") }, "\(imported.stderr)")

        let export = try Self.userctl(socket + ["export", "--quiet"])
        #expect(export.status == 0 && export.stderr.isEmpty, "\(export.stderr)")
        #expect(try Self.canonical(export: export.stdout) == Self.canonical(file: users))
        // In list order (the store's folded order), one user per line.
        #expect(export.stdout.hasPrefix("[\n  {") && export.stdout.hasSuffix("}\n]\n"))
        let listed = try Self.userctl(socket + ["list", "--all", "--json", "--quiet"])
        #expect(listed.status == 0 && listed.stdout == export.stdout)

        // Idempotent by id: the same file again writes nothing.
        let again = try Self.userctl(socket + ["import", "--quiet", "--json", file])
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again.stderr)")
        #expect(try JSONValue(parsing: again.stdout)["imported"]?.int64Value == 0)

        // One changed user: a new version, the others untouched.
        var changed = users
        changed[123]["full_name"] = "Changed Name"
        try Self.write(changed, to: file)
        let third = try Self.userctl(socket + ["import", "--quiet", "--json", file])
        #expect(try JSONValue(parsing: third.stdout)["imported"]?.int64Value == 1, "\(third.stdout) \(third.stderr)")
        let search = try Self.userctl(socket + ["list", "--search", "anged nam", "--json"])
        let found = try #require(try JSONValue(parsing: search.stdout).arrayValue)
        #expect(found.count == 1 && found.first?["version"]?.int64Value == 2, "\(search.stdout)")
    }

    /// A daemon limit that keeps a 60,000-user file staging for seconds after userctl's first
    /// progress line (half a second in): its 20 chunks at 4.5 a second.
    static let slowStaging = ["--intents-per-second", "6"]

    /// Reads `err` (userctl's stderr with `--json`) until the daemon has taken some users (a
    /// progress line), or userctl ended; returns what was read.
    static func waitForTaken(_ err: Pipe) -> String {
        var text = ""
        while !text.contains("\"progress\":\"import\"") {
            let data = err.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        return text
    }

    @Test func ctrlCBeforeTheCommitImportsNothingAndSaysSo() async throws {
        let daemon = try RealDaemon(sampleData: 0, extraArguments: Self.slowStaging)
        defer { daemon.tearDown() }
        let total = 60_000
        let users = Self.users(total, seed: 2)
        let file = daemon.directory + "/users.json"
        try Self.write(users, to: file)
        let (process, err) = try Self.startUserctl(["--socket", daemon.socketPath, "import", "--json", file])
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        var stderr = Self.waitForTaken(err)
        try #require(process.isRunning, "the import ended before it could be interrupted: \(stderr)")
        kill(process.processIdentifier, SIGINT)
        stderr += String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        // Interrupted while staging (or, if the signal came late, the import finished whole).
        if process.terminationStatus == 130 {
            #expect(stderr.contains("interrupted: nothing was imported (the daemon had taken"), "\(stderr)")
            #expect(try Self.storedCount(daemon.socketPath) == 0)
        } else {
            #expect(process.terminationStatus == 0, "\(stderr)")
            #expect(try Self.storedCount(daemon.socketPath) == total)
        }
        let again = try Self.userctl(["--socket", daemon.socketPath, "import", "--quiet", file])
        #expect(again.status == 0, "\(again.stderr)")
        let export = try Self.userctl(["--socket", daemon.socketPath, "export", "--quiet"])
        #expect(try Self.canonical(export: export.stdout) == Self.canonical(file: users))
    }

    @Test func killingUserctlMidImportImportsNothing() async throws {
        let daemon = try RealDaemon(sampleData: 0, extraArguments: Self.slowStaging)
        defer { daemon.tearDown() }
        let total = 60_000
        let users = Self.users(total, seed: 3)
        let file = daemon.directory + "/users.json"
        try Self.write(users, to: file)
        let (process, err) = try Self.startUserctl(["--socket", daemon.socketPath, "import", "--json", file])
        let stderr = Self.waitForTaken(err)
        try #require(process.isRunning, "the import ended before it could be killed: \(stderr)")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        // The commit was never sent: nothing shows, now or later.
        #expect(try Self.storedCount(daemon.socketPath) == 0)
        let rerun = try Self.userctl(["--socket", daemon.socketPath, "import", "--quiet", file])
        #expect(rerun.status == 0 && rerun.stdout.hasPrefix("imported \(total) users"), "\(rerun.stderr)")
        let export = try Self.userctl(["--socket", daemon.socketPath, "export", "--quiet"])
        #expect(try Self.canonical(export: export.stdout) == Self.canonical(file: users))
    }

    @Test func killingTheDaemonWhileStagingImportsNothing() async throws {
        let daemon = try RealDaemon(sampleData: 0, extraArguments: Self.slowStaging)
        defer { daemon.tearDown() }
        let total = 60_000
        let users = Self.users(total, seed: 4)
        let file = daemon.directory + "/users.json"
        try Self.write(users, to: file)
        let (process, err) = try Self.startUserctl(["--socket", daemon.socketPath, "import", "--json", file])
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        var stderr = Self.waitForTaken(err)
        try #require(process.isRunning, "the import ended before the daemon could be killed: \(stderr)")
        daemon.kill9()
        stderr += String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 69, "\(stderr)")
        #expect(stderr.contains("nothing was imported"), "\(stderr)")

        try daemon.start()
        // The staged users were dropped at start: none shows.
        #expect(try Self.storedCount(daemon.socketPath) == 0)
        let rerun = try Self.userctl(["--socket", daemon.socketPath, "import", "--quiet", file])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let export = try Self.userctl(["--socket", daemon.socketPath, "export", "--quiet"])
        #expect(try Self.canonical(export: export.stdout) == Self.canonical(file: users))
    }

    /// Files as other tools write them: JSON Lines (`jq -c '.[]'`), a UTF-8 byte-order mark,
    /// a REST page; and an empty file is said to be empty.
    @Test func jsonLinesAByteOrderMarkAndARESTPageImportAndAnEmptyFileIsSaid() throws {
        let daemon = try RealDaemon(sampleData: 0)
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath, "import", "--quiet"]
        let users = Self.users(2_500, seed: 8)
        let lines = try users.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
        let jsonl = daemon.directory + "/users.jsonl"
        try Data(([0xEF, 0xBB, 0xBF] as [UInt8]) + Array((lines[..<2_000].joined(separator: "\n") + "\n").utf8)).write(to: URL(fileURLWithPath: jsonl))
        let streamed = try Self.userctl(socket + [jsonl])
        #expect(streamed.status == 0 && streamed.stdout == "imported 2000 users from \(jsonl)\n", "\(streamed)")

        let page = daemon.directory + "/page.json"
        try Data(("{\"users\": [" + lines[2_000...].joined(separator: ",") + "]}").utf8).write(to: URL(fileURLWithPath: page))
        let paged = try Self.userctl(socket + [page])
        #expect(paged.status == 0 && paged.stdout == "imported 500 users from \(page)\n", "\(paged)")
        let export = try Self.userctl(["--socket", daemon.socketPath, "export", "--quiet"])
        #expect(try Self.canonical(export: export.stdout) == Self.canonical(file: users))

        let empty = daemon.directory + "/empty.json"
        try Data().write(to: URL(fileURLWithPath: empty))
        let refused = try Self.userctl(socket + [empty])
        #expect(refused.status == 65 && refused.stderr == "userctl: \(empty) is empty; nothing was imported\n", "\(refused)")
    }

    /// A user a file names twice (by its id, or by an email that derives the same id) is
    /// imported as its last entry has it, and is not called "already up to date"; a REST page
    /// follows the same rule as a streamed file.
    @Test func aUserNamedTwiceIsImportedAsItsLastEntryAndSaidSo() throws {
        let daemon = try RealDaemon(sampleData: 0)
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath, "import", "--quiet"]
        var users = Self.users(3, seed: 11)
        var renamed = users[0]
        renamed["full_name"] = "Renamed Later"
        users.append(renamed)
        users.append(["full_name": "No Id", "email": "no.id@example.com"])
        users.append(["full_name": "No Id Again", "email": "NO.ID@example.com"])
        let file = daemon.directory + "/twice.json"
        try Self.write(users, to: file)
        let run = try Self.userctl(socket + [file])
        #expect(run.status == 0 && run.stdout == "imported 4 users from \(file) (2 entries repeat users named earlier in the file: each user's last entry counts)\n", "\(run)")
        let again = try Self.userctl(socket + [file])
        #expect(again.stdout == "imported 0 users from \(file) (4 already up to date; 2 entries repeat users named earlier in the file: each user's last entry counts)\n", "\(again)")
        let export = try Self.userctl(["--socket", daemon.socketPath, "export", "--quiet"])
        let stored = try #require(try JSONValue(parsing: export.stdout).arrayValue)
        let names = Set(stored.compactMap { $0["name"]?.stringValue })
        #expect(stored.count == 4 && names.contains("Renamed Later") && names.contains("No Id Again"), "\(names)")
        #expect(stored.allSatisfy { $0["version"]?.int64Value == 1 }, "a user named twice is written once: \(stored)")

        let page = daemon.directory + "/page.json"
        let pageUsers: [[String: Any]] = [["full_name": "Paged", "email": "paged@example.com"],
                                          ["full_name": "Paged Last", "email": "paged@example.com"]]
        try JSONSerialization.data(withJSONObject: ["users": pageUsers]).write(to: URL(fileURLWithPath: page))
        let paged = try Self.userctl(socket + [page])
        #expect(paged.status == 0 && paged.stdout == "imported 1 user from \(page) (1 entry repeats a user named earlier in the file: each user's last entry counts)\n", "\(paged)")
        let json = try Self.userctl(["--socket", daemon.socketPath, "--json", "import", "--quiet", page])
        let summary = try JSONValue(parsing: json.stdout)
        #expect(summary["imported"]?.int64Value == 0 && summary["read"]?.int64Value == 2 && summary["users"]?.int64Value == 1, "\(json)")
    }

    /// A second array after the first, and an entry too large for one frame, are refused
    /// before anything is imported, with a data error rather than a closed connection.
    @Test func textAfterTheArrayAndAnOversizedEntryImportNothing() throws {
        let daemon = try RealDaemon(sampleData: 0)
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath, "import", "--quiet"]
        let two = daemon.directory + "/two.json"
        try Data(#"[{"name":"Ann","email":"ann@example.com"}][{"name":"Bob","email":"bob@example.com"}]"#.utf8).write(to: URL(fileURLWithPath: two))
        let refused = try Self.userctl(socket + [two])
        #expect(refused.status == 65 && refused.stderr.contains("only spaces may follow") && refused.stderr.contains("nothing was imported"), "\(refused)")

        let huge = daemon.directory + "/huge.json"
        let users: [[String: Any]] = [["full_name": "Fine", "email": "fine@example.com"],
                                      ["full_name": String(repeating: "B", count: 2_000_000), "email": "b@example.com"]]
        try Self.write(users, to: huge)
        let tooLarge = try Self.userctl(socket + [huge])
        #expect(tooLarge.status == 65 && tooLarge.stderr.contains("entry 2 is 1953 KiB of JSON") && tooLarge.stderr.contains("nothing was imported"), "\(tooLarge)")
        #expect(try Self.storedCount(daemon.socketPath) == 0)
    }

    /// An export to a full disk fails loudly (EX_IOERR) instead of ending as if the file were
    /// whole; a reader that goes away (`| head`) ends userctl quietly, as SIGPIPE would.
    @Test func anExportToAFullDiskFailsAndAClosedPipeEndsQuietly() throws {
        let daemon = try RealDaemon(sampleData: 3_000)
        defer { daemon.tearDown() }
        let products = try #require(RealDaemon.productsDirectory)
        func export(to output: FileHandle, closing readEnd: FileHandle? = nil) throws -> (status: Int32, stderr: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: products + "/userctl")
            process.arguments = ["--socket", daemon.socketPath, "export", "--quiet"]
            let err = Pipe()
            process.standardOutput = output
            process.standardError = err
            process.standardInput = FileHandle.nullDevice
            try process.run()
            try readEnd?.close()  // the reader goes away; the export is far larger than a pipe holds
            let stderr = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: stderr, as: UTF8.self))
        }
        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        let onFullDisk = try export(to: full)
        #expect(onFullDisk.status == 74 && onFullDisk.stderr == "userctl: cannot write the output: No space left on device; what was written is incomplete\n", "\(onFullDisk)")

        let pipe = Pipe()
        let closed = try export(to: pipe.fileHandleForWriting, closing: pipe.fileHandleForReading)
        #expect(closed.status == 141 && closed.stderr.isEmpty, "\(closed)")
    }

    @Test func anInvalidEntryImportsNothingAndIsNamedByItsPlaceInTheFile() throws {
        let daemon = try RealDaemon(sampleData: 0)
        defer { daemon.tearDown() }
        var users = Self.users(3_000, seed: 5)
        let good = users[600]["email"]
        users[600]["email"] = "not an email"
        let file = daemon.directory + "/users.json"
        try Self.write(users, to: file)
        let failed = try Self.userctl(["--socket", daemon.socketPath, "import", "--quiet", file])
        #expect(failed.status == 65, "\(failed.stderr)")
        #expect(failed.stderr.contains("Entry 601 (id \(users[600]["id"]!))"), "\(failed.stderr)")
        #expect(failed.stderr.contains("Nothing was imported."), "\(failed.stderr)")
        #expect(try Self.storedCount(daemon.socketPath) == 0)

        users[600]["email"] = good
        try Self.write(users, to: file)
        let fixed = try Self.userctl(["--socket", daemon.socketPath, "import", "--quiet", file])
        #expect(fixed.status == 0 && fixed.stdout == "imported 3000 users from \(file)\n", "\(fixed)")
    }

    @Test func aSyntaxErrorADuplicateEmailAndAStaleVersionEachImportNothing() throws {
        let daemon = try RealDaemon(sampleData: 0)
        defer { daemon.tearDown() }
        let socket = ["--socket", daemon.socketPath]
        let users = Self.users(1_000, seed: 6)
        let file = daemon.directory + "/users.json"
        // A JSON syntax error 300 entries past the first chunk, which was sent already.
        let bad = BulkImport.chunkUsers + 301
        var entries = try Self.users(bad + 100, seed: 8).map {
            String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self)
        }
        entries[bad - 1] = #"{"id": "x", "full_name": oops}"#
        try Data(("[" + entries.joined(separator: ",\n") + "]").utf8).write(to: URL(fileURLWithPath: file))
        let syntax = try Self.userctl(socket + ["import", "--quiet", file])
        #expect(syntax.status == 65 && syntax.stderr.contains("entry \(bad)") && syntax.stderr.contains("nothing was imported"), "\(syntax.stderr)")
        #expect(try Self.storedCount(daemon.socketPath) == 0)

        try Self.write(users, to: file)
        #expect(try Self.userctl(socket + ["import", "--quiet", file]).status == 0)
        // Entry 5 takes the address of a stored user; entry 3 names a version older than stored.
        var next = Self.users(10, seed: 7)
        next[4]["email"] = (users[9]["email"] as! String).uppercased()
        try Self.write(next, to: file)
        let duplicate = try Self.userctl(socket + ["import", "--quiet", file])
        #expect(duplicate.status == 65 && duplicate.stderr.contains("Entry 5 (id \(next[4]["id"]!))"), "\(duplicate.stderr)")
        #expect(duplicate.stderr.contains("Nothing was imported."), "\(duplicate.stderr)")
        let renamed = try Self.userctl(socket + ["rename", users[0]["id"] as! String, "Renamed Since"])
        #expect(renamed.status == 0, "\(renamed.stderr)")
        var stale = Array(users[0..<5])
        stale[0]["full_name"] = "From The Old File"
        stale.swapAt(0, 2)
        try Self.write(stale, to: file)
        let conflict = try Self.userctl(socket + ["import", "--quiet", file])
        #expect(conflict.status == 65 && conflict.stderr.contains("Entry 3 (id \(users[0]["id"]!)): it names version 1"), "\(conflict.stderr)")
        #expect(try Self.storedCount(daemon.socketPath) == 1_000)
        let shown = try Self.userctl(socket + ["show", users[0]["id"] as! String, "--json"])
        #expect(try JSONValue(parsing: shown.stdout)["name"]?.stringValue == "Renamed Since")
    }
}
