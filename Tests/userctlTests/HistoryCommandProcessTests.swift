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
        // The sample users came from the daemon itself, and the history says so.
        let imports = try JSONValue(parsing: try userctl(daemon, ["history", "--kind", "imported", "--json"]).stdout)
        let sample = try #require(imports.arrayValue?.last)
        #expect(sample["import"]?["source"] == "sample data" && sample["user"]?.stringValue == WatchProcessTests.me,
                "\(sample)")

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
        // A malformed ENTRY is a usage error, as a malformed --limit is: 64, not 65 (data).
        for text in ["abc", "0"] {
            let malformed = try userctl(daemon, ["revert", text])
            #expect(malformed.status == 64, "'\(text)': \(malformed.stderr)")
            #expect(malformed.stderr.contains("'\(text)' is not a history entry"), "\(malformed.stderr)")
        }

        let mine = try userctl(daemon, ["history", "--by", String(getuid()), "--since", "1h", "--json"])
        // The daemon's sample data (it runs as this uid), the rename and its undo.
        #expect(try JSONValue(parsing: mine.stdout).arrayValue?.count == 3)
        let undone = try userctl(daemon, ["history", id])
        #expect(undone.stdout.contains("(undoes #\(entry))"), "the undo says what it undid: \(undone.stdout)")
        // Its SOURCE is where it was made, as --via takes it: `--via userctl` lists the undo.
        let undoLine = undone.stdout.split(separator: "\n").first { $0.contains("(undoes #\(entry))") } ?? ""
        #expect(undoLine.contains(" userctl "), "the undo's source, as --via names it: \(undoLine)")
        let viaUserctl = try userctl(daemon, ["history", id, "--via", "userctl", "--json"])
        let reverts = try JSONValue(parsing: viaUserctl.stdout).arrayValue?.compactMap { $0["reverts"]?.int64Value }
        #expect(reverts == [entry], "--via userctl lists the undo: \(viaUserctl.stdout)")
        let viaRevert = try userctl(daemon, ["history", "--via", "revert"])
        #expect(viaRevert.status == 64 && viaRevert.stderr.contains("undoes #N"), "says where undos are: \(viaRevert)")
        let bad = try userctl(daemon, ["history", "--since", "yesterday"])
        #expect(bad.status == 64)
    }

    /// Issue 46 item 6: an import is one entry (its file, what it added and updated), each
    /// user's history says "imported in #N", the filters and dates, the "N more" line, and the
    /// import's undo: refused while a user changed since, then done without that user.
    @Test func anImportIsOneEntryAndItsUndoIsAllOrNothing() throws {
        let daemon = try RealDaemon(sampleData: 0)
        defer { daemon.tearDown() }
        let users = (0..<6).map { index -> JSONValue in
            ["id": .string(UUID().uuidString.lowercased()), "name": .string("Imported \(index)"),
             "email": .string("imported\(index)@example.com")]
        }
        let file = daemon.directory + "/people.json"
        try JSONValue.array(users).description.write(toFile: file, atomically: true, encoding: .utf8)
        let imported = try userctl(daemon, ["import", "--quiet", file])
        #expect(imported.status == 0, "\(imported.stderr)")

        let json = try JSONValue(parsing: try userctl(daemon, ["history", "--json"]).stdout).arrayValue ?? []
        #expect(json.count == 1, "one entry for the whole import: \(json.count)")
        let top = try #require(json.first)
        #expect(top["kind"] == "imported" && top["via"] == "import" && top["user_id"] == .null)
        #expect(top["import"]?["source"] == "people.json" && top["import"]?["added"]?.int64Value == 6)
        #expect(top["at"]?.stringValue?.hasSuffix("Z") == true, "RFC 3339 in --json")
        let entry = try #require(top["entry"]?.int64Value)

        let table = try userctl(daemon, ["history", "--date", "iso"])
        #expect(table.stdout.contains("imported people.json: 6 added, 0 updated"), "\(table.stdout)")
        #expect(table.stdout.contains("import") && !table.stdout.contains("just now"), "\(table.stdout)")
        let first = try #require(users.first?["id"]?.stringValue)
        let mine = try userctl(daemon, ["history", first])
        #expect(mine.stdout.contains("(imported in #\(entry))"), "\(mine.stdout)")
        #expect(mine.stdout.contains("just now"), "\(mine.stdout)")
        let local = try userctl(daemon, ["history", first, "--date", "local"])
        let year = String(Calendar.current.component(.year, from: Date()))
        #expect(local.status == 0 && local.stdout.contains(year), "\(local.stdout)")

        // Someone renames two users: three entries, two printed, one more.
        #expect(try userctl(daemon, ["rename", first, "Renamed Since"]).status == 0)
        let second = try #require(users[1]["id"]?.stringValue)
        #expect(try userctl(daemon, ["rename", second, "Renamed Too"]).status == 0)
        let partial = try userctl(daemon, ["history", "--limit", "2"])
        #expect(partial.stdout.hasSuffix("1 more: --limit 3 shows them\n"), "\(partial.stdout)")
        #expect(partial.stdout.contains("userctl"), "the rename's source, as a person says it: \(partial.stdout)")
        #expect(!partial.stdout.contains("command"), "\(partial.stdout)")
        let kinds = try userctl(daemon, ["history", "--kind", "imported", "--json"])
        let onlyImports = try JSONValue(parsing: kinds.stdout)
        #expect(onlyImports.arrayValue?.count == 1)
        let viaUserctl = try JSONValue(parsing: try userctl(daemon, ["history", "--via", "userctl", "--json"]).stdout)
        #expect(viaUserctl.arrayValue?.count == 2)
        #expect(try userctl(daemon, ["history", "--via", "fax"]).status == 64)

        // The undo is refused while users changed since, naming them, and changes nothing.
        let refused = try userctl(daemon, ["revert", String(entry)])
        #expect(refused.status == 75, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.contains("2 users changed since the import"), "\(refused.stderr)")
        // Each by name, with who changed it, what and when: not bare ids.
        #expect(refused.stderr.contains("“Renamed Since” (\(first.prefix(8))): "), "\(refused.stderr)")
        #expect(refused.stderr.contains("changed the name to “Renamed Since”"), "\(refused.stderr)")
        #expect(try userctl(daemon, ["list", "--json"]).stdout.contains("Imported 5"))
        let forced = try userctl(daemon, ["revert", String(entry), "--force-skip-changed"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(forced.stdout.contains("4 users removed, 0 restored"), "\(forced.stdout)")
        // The users it left alone by name, as the refusal told them.
        #expect(forced.stdout.contains("left as they are (changed since): “Renamed"), "\(forced.stdout)")
        #expect(forced.stdout.contains("“Renamed Too” (\(second.prefix(8))): "), "\(forced.stdout)")
        let left = try JSONValue(parsing: try userctl(daemon, ["list", "--json"]).stdout).arrayValue ?? []
        #expect(left.compactMap { $0["name"]?.stringValue }.sorted() == ["Renamed Since", "Renamed Too"])
        let again = try userctl(daemon, ["revert", String(entry), "--force-skip-changed"])
        #expect(again.status == 65 && again.stderr.contains("entry \(entry) is already undone"), "\(again.stderr)")
        let undone = try userctl(daemon, ["history", "--limit", "1"])
        let undid = "undid import #\(entry) (people.json): 4 removed, 0 restored"
        #expect(undone.stdout.contains(undid), "\(undone.stdout)")
    }
}
