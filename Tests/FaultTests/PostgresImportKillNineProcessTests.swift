import Foundation
import Glibc
import Testing
import UserListTestSupport

/// `kill -9` of a daemon on PostgreSQL once an import's commit is durable (issue 29, item 1):
/// the import stays committed in the database, and the restarted daemon finishes it before it
/// serves anyone, so the store holds every user of the file, never a part.
@Suite(.serialized, .childProcesses, .timeLimit(.minutes(5)),
       .enabled(if: PostgresTestServer.isAvailable, "PostgreSQL 15 is missing: run scripts/setup.sh"))
struct PostgresImportKillNineProcessTests {
    @Test func aCommittedImportSurvivesKillNineWhole() async throws {
        let server = try PostgresTestServer.shared()
        let database = try server.makeDatabase()
        func query(_ sql: String) throws -> String { try server.psql(database, sql).trimmingCharacters(in: .whitespacesAndNewlines) }
        let directory = try TempDirectory("pg-import-kill9")
        let daemon = ChildDaemon(directory: directory.path, databasePath: server.conninfo(database), sampleData: 100)
        try daemon.start()
        defer { daemon.killHard() }
        let total = 100_000
        let caught = try await offPool { [server, database] in
            try ImportKillNineProcessTests.killOnceCommitted(daemon, directory: directory.path, total: total,
                                                             storeFiles: server.directory + "/data/pg_wal") {
                (try? server.psql(database, "SELECT state FROM imports WHERE state = 'committed'"))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "committed"
            }
        }
        try #require(caught, "the import finished before its commit could be seen; nothing was tested")
        // The killed daemon's connections go with it: the server rolls the merge back.
        #expect(try query("SELECT COUNT(*) FROM users") == "100", "the merge had not committed when the daemon was killed")
        #expect(try query("SELECT entries FROM imports WHERE state = 'committed'") == String(total))

        try daemon.start()
        #expect(try query("SELECT COUNT(*) FROM users") == String(100 + total), "every user of the file, after the restart")
        #expect(try query("SELECT (SELECT COUNT(*) FROM imports) + (SELECT COUNT(*) FROM import_staged)") == "0")
        let parts = """
            FROM history_parts p JOIN history h USING (entry)
            WHERE h.via = 'import' AND h.kind = 'imported' AND p.user_id::text LIKE '%-000000000029'
            """
        #expect(try query("SELECT COUNT(*) " + parts) == String(total),
                "a part per user of the file, as an import, though another daemon finished it")
        #expect(try query("SELECT COUNT(DISTINCT entry) " + parts) == "1", "one history entry for the import")
    }
}

/// PostgreSQL going away while a daemon merges an import (issue 46, seen in a trial): the import
/// stays committed, and its client is told it is applied once the database is back. The running
/// daemon finishes it as soon as it reconnects, not at some daemon's next start, when people may
/// have edited its users since.
@Suite(.serialized, .childProcesses, .timeLimit(.minutes(5)),
       .enabled(if: PostgresTestServer.isAvailable, "PostgreSQL 15 is missing: run scripts/setup.sh"))
struct PostgresImportCutShortProcessTests {
    @Test func aCommittedImportIsFinishedWhenTheDatabaseIsBack() async throws {
        let server = try PostgresTestServer.makePrivate()  // restarted below: not the shared one
        defer { server.tearDown() }
        let database = try server.makeDatabase()
        func query(_ sql: String) throws -> String { try server.psql(database, sql).trimmingCharacters(in: .whitespacesAndNewlines) }
        let directory = try TempDirectory("pg-import-cut-short")
        let daemon = ChildDaemon(directory: directory.path, databasePath: server.conninfo(database), sampleData: 10)
        try daemon.start()
        defer { daemon.killHard() }
        // What a merge the outage cut short leaves: the import committed, its entries staged.
        _ = try query("""
            INSERT INTO imports (id, state, entries) VALUES (9001, 'committed', 3);
            INSERT INTO import_staged (import_id, position, id, name, email, name_key, email_key)
            SELECT 9001, n, ('00000000-0000-4000-8000-00000000900' || n)::uuid, 'Cut Short ' || n,
                   'cut.short.' || n || '@example.com', 'cut short ' || n, 'cut.short.' || n || '@example.com'
            FROM generate_series(1, 3) AS n;
            """)
        #expect(try query("SELECT COUNT(*) FROM users") == "10", "a running daemon leaves a committed import alone")
        try server.restart()
        let finished = try await offPool { [server, database] in
            eventually { (try? server.psql(database, "SELECT COUNT(*) FROM users"))?.hasPrefix("13") == true }
        }
        #expect(finished, "the daemon finished the import once the database was back")
        #expect(try query("SELECT (SELECT COUNT(*) FROM imports) + (SELECT COUNT(*) FROM import_staged)") == "0")
    }
}

/// The merge's own connection lost while PostgreSQL stays up (an operator's
/// `pg_terminate_backend`): the client is told the import is kept, by the reply's `kept` mark
/// (not "nothing was imported", which would invite a second run), and the daemon finishes it
/// without a restart or an outage to announce it.
@Suite(.serialized, .childProcesses, .timeLimit(.minutes(5)),
       .enabled(if: PostgresTestServer.isAvailable, "PostgreSQL 15 is missing: run scripts/setup.sh"))
struct PostgresImportMergeConnectionLostProcessTests {
    @Test func theClientIsToldTheImportIsKeptAndTheDaemonFinishesIt() async throws {
        let server = try PostgresTestServer.shared()
        let database = try server.makeDatabase()
        func query(_ sql: String) throws -> String { try server.psql(database, sql).trimmingCharacters(in: .whitespacesAndNewlines) }
        let directory = try TempDirectory("pg-import-merge-lost")
        let daemon = ChildDaemon(directory: directory.path, databasePath: server.conninfo(database), sampleData: 10)
        try daemon.start()
        defer { daemon.killHard() }
        let total = 60_000
        let file = directory.path + "/import.json"
        try ImportKillNineProcessTests.writeImportFile(file, users: total, idEnd: "000000000046", name: "Kept",
                                                       email: "kept")

        let importer = Process()
        importer.executableURL = URL(fileURLWithPath: ImportKillNineProcessTests.userctl)
        importer.arguments = ["--socket", daemon.socketPath, "--no-spawn", "--json", "import", "--quiet", file]
        let errors = Pipe()
        importer.standardOutput = FileHandle.nullDevice
        importer.standardError = errors
        try importer.run()
        // The merge holds the import's advisory lock (`PostgresImportStaging.importLock`, "ulim")
        // from the commit's mark to its end: end that backend once the mark is durable.
        let terminate = """
            SELECT COUNT(pg_terminate_backend(pid)) FROM pg_locks
            WHERE locktype = 'advisory' AND granted AND classid = \(0x756C_696D) AND objsubid = 2
            """
        let (seen, terminated) = try await offPool { [server, database] in
            var terminated = false
            let seen = whenFilesChange([server.directory + "/data/pg_wal"]) {
                guard importer.isRunning else { return true }
                let committed = (try? server.psql(database, "SELECT state FROM imports WHERE state = 'committed'"))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "committed"
                guard committed else { return false }
                terminated = (try? server.psql(database, terminate))?.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
                return true
            }
            return (seen, terminated)
        }
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        importer.waitUntilExit()
        try #require(seen && terminated, "the merge ended before its connection could be cut; nothing was tested")

        #expect(importer.terminationStatus == 69, "unavailable, as the store was: \(stderr)")
        let error = try JSONSerialization.jsonObject(with: Data(stderr.utf8)) as? [String: Any]
        let body = error?["error"] as? [String: Any]
        #expect(body?["kept"] as? Bool == true, "the reply marked the import kept: \(stderr)")
        #expect(body?["code"] as? String == "unavailable")
        let message = body?["message"] as? String ?? ""
        #expect(message.contains("accepted whole") && !message.contains("othing was imported"), "\(message)")

        // No outage, no restart: the daemon finishes the import itself, whole.
        let finished = try await offPool { [server, database] in
            whenFilesChange([server.directory + "/data/pg_wal"]) {
                (try? server.psql(database, "SELECT COUNT(*) FROM imports"))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "0"
            }
        }
        #expect(finished, "the kept import was finished by the running daemon")
        #expect(try query("SELECT COUNT(*) FROM users") == String(10 + total), "every user of the file")
        let parts = "FROM history_parts WHERE user_id::text LIKE '%-000000000046'"
        #expect(try query("SELECT COUNT(*) \(parts)") == String(total), "a part per user of the file")
        #expect(try query("SELECT COUNT(DISTINCT entry) \(parts)") == "1", "one history entry for the import")
    }
}
