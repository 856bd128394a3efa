import Foundation
import Glibc
import Testing
import UserListTestSupport

/// `kill -9` of the daemon once an import's commit is durable (issue 29, item 1): the restarted
/// daemon finishes the import before it serves anyone, so the store holds every user of the
/// file, never a part. (Killing it while the file is still being staged imports nothing:
/// `BulkImportExportProcessTests`.)
@Suite(.serialized, .childProcesses, .timeLimit(.minutes(5)))
struct ImportKillNineProcessTests {
    static var userctl: String { Repo.root + "/.build/debug/userctl" }

    @Test func aCommittedImportSurvivesKillNineWhole() async throws {
        let directory = try TempDirectory("import-kill9")
        let daemon = ChildDaemon(directory: directory.path, sampleData: 100)
        try daemon.start()
        defer { daemon.killHard() }
        let total = 100_000
        let caught = try await offPool {
            try Self.killOnceCommitted(daemon, directory: directory.path, total: total, storeFiles: directory.path) {
                (try? StoreProbe.value(daemon.databasePath, "SELECT state FROM imports WHERE state = 'committed'")) == "committed"
            }
        }
        try #require(caught, "the import finished before its commit could be seen; nothing was tested")
        #expect(try StoreProbe.users(daemon.databasePath).count < 100 + total, "the merge had not ended when the daemon was killed")

        try daemon.start()
        let stored = try StoreProbe.users(daemon.databasePath)
        #expect(stored.count == 100 + total, "every user of the file, after the restart: \(stored.count)")
        #expect(try StoreProbe.value(daemon.databasePath, "SELECT COUNT(*) FROM imports") == "0")
    }

    /// Killed between two slices of the merge (some users merged, not all): the restart merges
    /// the rest from the last slice's mark, and applies no entry twice (one history entry each).
    /// A merge commits between steps only when another write waits: `userctl rename` in a loop
    /// (of a user the file leaves alone) keeps one waiting.
    @Test func anImportKilledBetweenMergeSlicesIsFinishedFromItsMark() async throws {
        let directory = try TempDirectory("import-kill9-slices")
        let daemon = ChildDaemon(directory: directory.path, sampleData: 100)
        try daemon.start()
        defer { daemon.killHard() }
        let total = 100_000
        let other = try #require(try StoreProbe.users(daemon.databasePath).keys.first)
        let renamer = Process()
        renamer.executableURL = URL(fileURLWithPath: "/bin/sh")
        renamer.arguments = ["-c", #"i=0; while :; do "$0" --socket "$1" --no-spawn rename "$2" "Busy $i" >/dev/null 2>&1; i=$((i+1)); done"#,
                             Self.userctl, daemon.socketPath, other]
        try renamer.run()
        defer { renamer.terminate(); renamer.waitUntilExit() }
        let caught = try await offPool {
            try Self.killOnceCommitted(daemon, directory: directory.path, total: total, storeFiles: directory.path) {
                (try? StoreProbe.value(daemon.databasePath, "SELECT phase FROM import_progress WHERE merged_through != ''")) == "merging"
            }
        }
        try #require(caught, "the merge finished before a slice could be seen; nothing was tested")
        let merged = try StoreProbe.users(daemon.databasePath).count - 100
        #expect(merged > 0 && merged < total, "killed between slices: \(merged) of \(total) merged")

        try daemon.start()
        #expect(try StoreProbe.users(daemon.databasePath).count == 100 + total)
        // One history entry for the import (issue 46), resumed across the kill, a part per user.
        let parts = "FROM history_parts WHERE user_id LIKE '%-000000000029'"
        #expect(try StoreProbe.value(daemon.databasePath, "SELECT COUNT(*) \(parts)") == String(total))
        #expect(try StoreProbe.value(daemon.databasePath, "SELECT COUNT(DISTINCT entry) \(parts)") == "1")
        let counted = "SELECT added FROM history WHERE entry = (SELECT max(entry) FROM history_parts)"
        #expect(try StoreProbe.value(daemon.databasePath, counted) == String(total), "each user counted once")
        #expect(try StoreProbe.value(daemon.databasePath, "SELECT (SELECT COUNT(*) FROM imports) + (SELECT COUNT(*) FROM import_merge)") == "0")
    }

    /// Writes `total` new users as a JSON array to `file`: ids `%08x-0000-4000-8000-<idEnd>`,
    /// names "`name` N", addresses "`email`.N@example.org".
    static func writeImportFile(_ file: String, users total: Int, idEnd: String, name: String,
                                email: String) throws {
        let entries = (0..<total).map { i in
            #"{"id":""# + String(format: "%08x", i) + #"-0000-4000-8000-\#(idEnd)","name":"\#(name) \#(i)","#
                + #""email":"\#(email).\#(i)@example.org"}"#
        }
        try Data(("[" + entries.joined(separator: ",\n") + "]").utf8).write(to: URL(fileURLWithPath: file))
    }

    /// Writes `total` new users (ids ending in `-000000000029`) to a file in `directory`, runs
    /// `userctl import` of it against `daemon`, and kills the daemon with SIGKILL as soon as
    /// `committed` sees the import's commit mark. Whether it was seen before the import ended.
    ///
    /// Blocking, on a thread of its own (`offPool`): under a plain `swift test` the in-process
    /// suites keep Swift's two pool threads busy, and a poll waiting there for a turn missed the
    /// whole window between the commit and the end of the merge.
    static func killOnceCommitted(_ daemon: ChildDaemon, directory: String, total: Int, storeFiles: String,
                                  committed: () -> Bool) throws -> Bool {
        let file = directory + "/import.json"
        try writeImportFile(file, users: total, idEnd: "000000000029", name: "Kill Nine", email: "kill9")

        let importer = Process()
        importer.executableURL = URL(fileURLWithPath: userctl)
        importer.arguments = ["--socket", daemon.socketPath, "--no-spawn", "import", "--quiet", file]
        importer.standardOutput = FileHandle.nullDevice
        importer.standardError = FileHandle.nullDevice
        try importer.run()
        defer { importer.waitUntilExit() }
        // The commit's mark is durable: kill the daemon before (or while) it merges. Checked after
        // each write to the store's files (each slice of the merge writes its WAL), so the mark
        // is seen by the slice after it at the latest.
        let seen = whenFilesChange([storeFiles]) { !importer.isRunning || committed() }
        guard seen, importer.isRunning else { return false }
        daemon.killHard()
        return true
    }
}
