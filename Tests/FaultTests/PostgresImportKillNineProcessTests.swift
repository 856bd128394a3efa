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
