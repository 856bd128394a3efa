import Foundation
import Testing
import UserListTestSupport
import UserListWire
@testable import userctl

/// Issue 27 items 2, 3 and 9: exit codes a script can act on, commands that stay under their own
/// daemon's rate limit, and import progress that never runs ahead of its count. Each test runs
/// the built `userctl` against its own daemon.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)), .disabled(if: RealDaemon.skipReason != nil, "userlistd not built: swift build first"))
struct CommandLimitsProcessTests {
    typealias Run = UserctlCommandTests.Run

    static func userctl(_ daemon: RealDaemon, _ arguments: [String]) throws -> Run {
        try UserctlCommandTests.userctl(["--socket", daemon.socketPath] + arguments)
    }

    /// `count` users in the wire shape, one a line, and where each line's object ends (bytes).
    static func usersFile(_ path: String, count: Int, prefix: String) throws -> [Int] {
        var text = "[\n"
        var ends: [Int] = []
        for index in 1...count {
            let id = UUID().uuidString.lowercased()
            text += #"{"id":"\#(id)","name":"\#(prefix) User \#(index)","email":"\#(prefix.lowercased()).\#(index)@example.com","avatar_url":null}"#
            ends.append(text.utf8.count)
            text += index == count ? "\n]\n" : ",\n"
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return ends
    }

    // MARK: item 2

    /// A taken email can never be saved by retrying: 65 (data), not 75 (try again).
    @Test func aDuplicateEmailIsADataErrorNotATemporaryOne() throws {
        let daemon = try RealDaemon(sampleData: 5)
        defer { daemon.tearDown() }
        let first = try #require(try JSONValue(parsing: Self.userctl(daemon, ["list", "--json"]).stdout).arrayValue?.first)
        let email = try #require(first["email"]?.stringValue)
        let name = try #require(first["name"]?.stringValue)

        let add = try Self.userctl(daemon, ["add", "--name", "Copy Cat", "--email", email.uppercased()])
        #expect(add.status == 65, "a data error: \(add)")
        #expect(add.stderr.contains("already used by") && add.stderr.contains(name), "names the other user: \(add.stderr)")

        let file = daemon.directory + "/clash.json"
        try #"[{"id":"11111111-2222-3333-4444-555555555555","name":"Clash","email":"\#(email)"}]"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let imported = try Self.userctl(daemon, ["import", "--quiet", file])
        #expect(imported.status == 65, "\(imported)")
        #expect(imported.stderr.contains("already used by"), "\(imported.stderr)")
    }

    // MARK: item 3

    /// With the daemon's limit at 4 intents a second, listing 2,500 users, exporting 6,000 and
    /// importing 3,000 all succeed: userctl asks for pages of up to 1,000 and paces itself to
    /// the limit the daemon announces. (`list --page-size` used to send one intent per 50 users
    /// at full speed, `export` and `import` as fast as replies came.)
    @Test func commandsStayUnderTheirDaemonsRateLimit() throws {
        let daemon = try RealDaemon(sampleData: 6_000, extraArguments: ["--intents-per-second", "4"])
        defer { daemon.tearDown() }
        let list = try Self.userctl(daemon, ["list", "--page-size", "2500"])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(!list.stderr.contains("Too many messages"), "\(list.stderr)")
        // To a pipe the count goes to stderr (issue 48 item 2).
        #expect(list.stderr.hasSuffix("2500 of 6000 users (more: --all)\n"), "\(list.stderr.suffix(80))")
        #expect(list.stdout.split(separator: "\n").count == 2_501, "header and 2,500 users")

        let export = try Self.userctl(daemon, ["export", "--quiet"])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(try JSONValue(parsing: export.stdout).arrayValue?.count == 6_000)

        let file = daemon.directory + "/paced.json"
        _ = try Self.usersFile(file, count: 3_000, prefix: "Paced")
        let imported = try Self.userctl(daemon, ["import", "--quiet", file])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout == "imported 3000 users from \(file)\n", "\(imported.stdout)")
    }

    /// The issue's own case, with the daemon's default limit: a page far larger than one
    /// intent's worth of users.
    @Test func aListOfTwentyFiveThousandUsersSucceeds() throws {
        let daemon = try RealDaemon(sampleData: 26_000)
        defer { daemon.tearDown() }
        let list = try Self.userctl(daemon, ["list", "--page-size", "25000", "--json"])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(try JSONValue(parsing: list.stdout).arrayValue?.count == 25_000)
    }

    // MARK: item 9

    /// Progress (`--json`: one line a second) says how much of the file is done by the users
    /// the daemon acknowledged, not by how far the reader ran ahead (up to `BulkImport.window` chunks).
    /// The daemon's limit of 4 intents a second makes the 3 chunks (`BulkImport.chunkUsers`
    /// each) and the begin and commit take seconds, so lines appear.
    @Test func importProgressNeverRunsAheadOfItsCount() throws {
        let daemon = try RealDaemon(sampleData: 1, extraArguments: ["--intents-per-second", "4"])
        defer { daemon.tearDown() }
        let file = daemon.directory + "/progress.json"
        let ends = try Self.usersFile(file, count: 3 * BulkImport.chunkUsers, prefix: "Progress")
        let size = Double(try #require(FileManager.default.attributesOfItem(atPath: file)[.size] as? Int))
        let run = try Self.userctl(daemon, ["import", "--json", file])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }.filter { $0["progress"] != nil }
        #expect(lines.count >= 2, "progress was reported while the import ran: \(run.stderr)")
        for line in lines {
            let done = try #require(line["done"]?.int64Value.map(Int.init))
            let fraction = try #require(line["fraction"].flatMap { $0.doubleValue ?? $0.int64Value.map(Double.init) })
            let expected = done == 0 ? 0 : Double(ends[done - 1]) / size
            #expect(abs(fraction - expected) < 0.01, "\(done) users done is \(expected), not \(fraction): \(line)")
        }
    }

    /// "imported 1 user", not "1 users".
    @Test func oneUserIsOneUser() throws {
        let daemon = try RealDaemon(sampleData: 1)
        defer { daemon.tearDown() }
        let file = daemon.directory + "/one.json"
        _ = try Self.usersFile(file, count: 1, prefix: "Single")
        let run = try Self.userctl(daemon, ["import", file])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "imported 1 user from \(file)\n", "\(run.stdout)")
        let all = try Self.userctl(daemon, ["list", "--all", "--search", "Single User"])
        #expect(all.stderr.hasSuffix("1 user\n"), "\(all.stderr)")
        // A search that matches no one says so, and is no failure.
        for extra in [[], ["--all"]] {
            let none = try Self.userctl(daemon, ["list", "--search", "Nobody Has This"] + extra)
            #expect(none.status == 0, "\(extra): \(none.stderr)")
            #expect(none.stderr == "no user matches \"Nobody Has This\"\n", "\(extra): \(none.stderr)")
        }
    }
}
