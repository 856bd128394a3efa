import Foundation
import Testing
@testable import UserListData
import UserListDomain
import UserListTestSupport

/// What an import leaves once its merge has replied (`PostgresImportCleanup`), against a real
/// server: its staged rows go after the reply; rows a dead daemon left between its merge and that clean-up go at the next open; a
/// chunk staged into an import that is gone leaves nothing.
@Suite(.serialized, .childProcesses, .enabled(if: PostgresTestServer.isAvailable,
                "PostgreSQL 15 is missing (/usr/lib/postgresql/15/bin, or no 'postgres' user to run it as root): run scripts/setup.sh"))
struct PostgresImportCleanupProcessTests {
    let server: PostgresTestServer
    let database: String
    let store: PostgresUserRepository

    init() throws {
        server = try PostgresTestServer.shared()
        database = try server.makeDatabase()
        store = try PostgresUserRepository(connection: try PGConnectionString(server.conninfo(database)))
    }

    func query(_ sql: String) throws -> String {
        try server.psql(database, sql).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aLargeImportIsCleanedUpAfterItsReply() async throws {
        var users = SampleUsers.generate(count: PostgresUserRepository.analyzeAfter, seed: 21)
        users[1_234].name = "Quixotic Zebulon"
        let token = try await StagedImportTests.staged(store, users, chunk: 2_500)
        let summary = try await #require(store.importStaging).commitImport(token)
        #expect(summary == ImportSummary(read: users.count, written: users.count))
        await store.importCleanupFinished()
        #expect(try query("SELECT (SELECT COUNT(*) FROM imports) + (SELECT COUNT(*) FROM import_staged)") == "0")
        #expect(try await store.fetchPage(PageRequest(limit: 5, search: "xotic zeb")).users.map(\.id) == [users[1_234].id])
    }

    @Test func aRefusedImportIsCleanedUpToo() async throws {
        var users = SampleUsers.generate(count: 200, seed: 22)
        users[150].email = users[10].email
        let token = try await StagedImportTests.staged(store, users)
        await #expect(throws: UserError.self) { try await store.importStaging!.commitImport(token) }
        await store.importCleanupFinished()
        #expect(try query("SELECT (SELECT COUNT(*) FROM imports) + (SELECT COUNT(*) FROM import_staged) + (SELECT COUNT(*) FROM users)") == "0")
    }

    @Test func stagedRowsWhoseImportIsGoneAreSweptAtOpenAndALiveImportsAreKept() async throws {
        let users = SampleUsers.generate(count: 300, seed: 23)
        let merged = try await StagedImportTests.staged(store, Array(users[..<200]))
        let live = try await StagedImportTests.staged(store, Array(users[200...]))
        // What the merge's transaction leaves if its daemon dies before the clean-up: the
        // `imports` row gone, the staged rows still there.
        _ = try query("DELETE FROM imports WHERE id = \(merged.rawValue)")
        #expect(try query("SELECT COUNT(*) FROM import_staged") == "300")
        let reopened = try PostgresUserRepository(connection: try PGConnectionString(server.conninfo(database)))
        #expect(try query("SELECT COUNT(*) FROM import_staged") == "100", "the gone import's rows swept, the live one's kept")
        #expect(try await reopened.importStaging!.commitImport(live).written == 100)
    }

    @Test func aChunkStagedIntoAnAbortedImportLeavesNoRows() async throws {
        let users = SampleUsers.generate(count: 20, seed: 24)
        let token = try await StagedImportTests.staged(store, Array(users[..<10]))
        await store.importStaging!.abortImport(token)
        await #expect(throws: UserError.self) {
            try await store.importStaging!.stage(StagedImportTests.entries(Array(users[10...]), from: 11), into: token)
        }
        #expect(try query("SELECT (SELECT COUNT(*) FROM imports) + (SELECT COUNT(*) FROM import_staged)") == "0")
    }
}
