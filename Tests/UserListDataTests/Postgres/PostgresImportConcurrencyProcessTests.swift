import Foundation
import Testing
@testable import UserListData
import UserListDomain
import UserListTestSupport

/// Other clients' saves while a PostgreSQL import merges, against a real server. The merge is
/// held half-way, deterministically: this test's own connection locks the row of the import's
/// first user (in id order, the merge's order), as a save in flight would, until the test lets go.
@Suite(.serialized, .childProcesses, .enabled(if: PostgresTestServer.isAvailable,
                "PostgreSQL 15 is missing (/usr/lib/postgresql/15/bin, or no 'postgres' user to run it as root): run scripts/setup.sh"))
struct PostgresImportConcurrencyProcessTests {
    static let first = UUID(uuidString: "00000000-0000-4000-8000-000000000001")!
    static let last = UUID(uuidString: "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF")!

    /// A store holding the user the merge will wait for and another user, an import staged that
    /// changes the first and adds `added`, and a connection holding the first one's row.
    struct HeldMerge {
        let store: PostgresUserRepository
        let blocker: PGConnection
        let held: User
        let other: User
        let token: ImportToken
        let conninfo: String

        init(adding added: [User]) async throws {
            let server = try PostgresTestServer.shared()
            let database = try server.makeDatabase()
            conninfo = server.conninfo(database)
            store = try PostgresUserRepository(connection: try PGConnectionString(server.conninfo(database)))
            held = try await store.add(NewUser(id: PostgresImportConcurrencyProcessTests.first, name: "Held", email: "held@example.org"))
            other = try await store.add(NewUser(name: "Other", email: "other@example.org"))
            var changed = held
            changed.name = "Held Changed"
            token = try await StagedImportTests.staged(store, [changed] + added)
            blocker = PGConnection(conninfo: conninfo, server: "test")
            try blocker.execute("BEGIN", "holding a row")
            try blocker.query("SELECT 1 FROM users WHERE id = $1 FOR UPDATE", [held.id.uuidString], "holding a row")
        }

        /// Starts the commit and returns once its merge waits for the held row.
        func startMerge() async throws -> Task<ImportSummary, any Error> {
            let (store, token) = (store, token)
            let merge = Task { try await store.importStaging!.commitImport(token, by: ChangeAuthor(uid: 1001, userName: "alice", client: "userctl", via: .command)) }
            // Watched from a connection of its own: inside the blocker's transaction,
            // pg_stat_activity would be one snapshot taken at its first read.
            let watcher = PGConnection(conninfo: conninfo, server: "test")
            let waiting = try await eventually {
                try watcher.query("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%import_staged%'",
                                  [], "watching the merge").first?[0] == "1"
            }
            #expect(waiting, "the merge never reached the held row")
            return merge
        }

        /// Saves `user` from another task; whether it completed while the row is still held.
        func saveCompletesWhileHeld(_ user: User) async -> Bool {
            let done = DoneFlag()
            let store = store
            Task {
                _ = try? await store.update(user)
                done.set()
            }
            return await done.wait()
        }
    }

    @Test func aSaveOfAnotherUserGoesOnWhileAnImportMerges() async throws {
        let added = SampleUsers.generate(count: 200, seed: 21)
        let held = try await HeldMerge(adding: added)
        let merge = try await held.startMerge()
        var renamed = held.other
        renamed.name = "Other Renamed"
        // Before, the merge took the change-log lock first, and every save waited for all of it.
        #expect(await held.saveCompletesWhileHeld(renamed), "a save of a user the import does not write waited for the merge")
        try held.blocker.execute("ROLLBACK", "letting go")
        let summary = try await merge.value
        #expect(summary == ImportSummary(read: 201, written: 201))
        #expect(try await held.store.fetchUser(id: held.held.id).name == "Held Changed")
        #expect(try await held.store.fetchUser(id: held.other.id) == User(id: held.other.id, name: "Other Renamed", email: "other@example.org", version: 2))
        #expect(try await held.store.fetchPage(PageRequest(limit: 1)).totalCount == 202)
    }

    @Test func anEmailTakenByASaveDuringTheMergeRefusesTheWholeImport() async throws {
        var added = SampleUsers.generate(count: 50, seed: 22)
        added.append(User(id: Self.last, name: "Newcomer", email: "wanted@example.org"))  // merged last, in id order
        let held = try await HeldMerge(adding: added)
        let merge = try await held.startMerge()
        var taking = held.other
        taking.email = "WANTED@example.org"
        #expect(await held.saveCompletesWhileHeld(taking))
        try held.blocker.execute("ROLLBACK", "letting go")
        await #expect(throws: PostgresImportMerge.emailTakenMeanwhile) { try await merge.value }
        #expect(try await held.store.fetchUser(id: held.held.id).name == "Held")
        #expect(try await held.store.fetchPage(PageRequest(limit: 1)).totalCount == 2)
        #expect(try await held.store.fetchUser(id: held.other.id).email == "WANTED@example.org")
    }
}
