import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire

/// `userctl history` and `userctl revert` as a person runs them, against a real daemon: who
/// renamed a user and how, the JSON's shape, undo, and undo refused once the user changed.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)), .disabled(if: RealDaemon.skipReason != nil, "userlistd not built: swift build first"))
struct HistoryCommandProcessTests {
    func userctl(_ daemon: RealDaemon, _ arguments: [String]) throws -> UserctlCommandTests.Run {
        try UserctlCommandTests.userctl(["--socket", daemon.socketPath] + arguments)
    }

    @Test func aRenameShowsInHistoryWithWhoAndRevertUndoesItOnce() throws {
        let daemon = try RealDaemon(sampleData: 5)
        defer { daemon.tearDown() }
        let list = try userctl(daemon, ["list", "--json"])
        let first = try #require(try JSONValue(parsing: list.stdout).arrayValue?.first)
        let id = try #require(first["id"]?.stringValue)
        let name = try #require(first["name"]?.stringValue)
        #expect(try userctl(daemon, ["rename", id, "Renamed For History"]).status == 0)

        let json = try userctl(daemon, ["history", id, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let entries = try #require(try JSONValue(parsing: json.stdout).arrayValue)
        let top = try #require(entries.first)
        for key in ["entry", "at", "uid", "user", "kind", "via", "before", "after"] { #expect(top[key] != nil, "\(key)") }
        #expect(top["kind"] == "saved" && top["via"] == "command")
        #expect(top["uid"]?.int64Value == Int64(getuid()))
        #expect(top["before"]?["name"]?.stringValue == name)
        #expect(top["after"]?["name"] == "Renamed For History")
        #expect(entries.last?["kind"] == "added" && entries.last?["before"] == .null)
        let entry = try #require(top["entry"]?.int64Value)

        let table = try userctl(daemon, ["history", id])
        #expect(table.stdout.contains("name \"\(name)\" → \"Renamed For History\""), "\(table.stdout)")
        #expect(table.stdout.contains("just now"))

        let revert = try userctl(daemon, ["revert", String(entry)])
        #expect(revert.status == 0, "\(revert.stderr)")
        #expect(revert.stdout.contains("is \"\(name)\" again"))
        // Issue 46 item 5: the second revert finds the change undone already: not a conflict.
        let again = try userctl(daemon, ["revert", String(entry)])
        #expect(again.status == 65, "\(again.stdout) \(again.stderr)")
        #expect(again.stderr.contains("entry \(entry) is already undone: \"\(name)\""), "\(again.stderr)")
        #expect(!again.stderr.contains("Someone else saved"), "\(again.stderr)")
        // Renaming to the name the user has is not a change: no entry, no version.
        let unchanged = try userctl(daemon, ["rename", id, name, "--json"])
        #expect(unchanged.status == 0, "\(unchanged.stderr)")
        #expect(try JSONValue(parsing: unchanged.stdout)["version"]?.int64Value == 3, "\(unchanged.stdout)")
        let missing = try userctl(daemon, ["revert", "999999"])
        #expect(missing.status == 65, "an entry that is not kept is the caller's error: \(missing.stderr)")
        #expect(missing.stderr.contains("no history entry 999999"), "\(missing.stderr)")

        let mine = try userctl(daemon, ["history", "--by", String(getuid()), "--since", "1h", "--json"])
        #expect(try JSONValue(parsing: mine.stdout).arrayValue?.count == 2)  // the rename and its undo
        let undone = try userctl(daemon, ["history", id])
        #expect(undone.stdout.contains("(undoes #\(entry))"), "the undo says what it undid: \(undone.stdout)")
        let bad = try userctl(daemon, ["history", "--since", "yesterday"])
        #expect(bad.status == 64)
    }
}
