import Foundation
import Testing
@testable import UserListData
import UserListDomain
import UserListTestSupport

/// The checks of a PostgreSQL import as large as the ones that are analyzed and cleaned up after
/// the reply (`PostgresUserRepository.analyzeAfter`): all or nothing, and the entry named is the
/// file's first bad one, whichever check finds it.
@Suite(.serialized, .childProcesses, .enabled(if: PostgresTestServer.isAvailable,
                "PostgreSQL 15 is missing (/usr/lib/postgresql/15/bin, or no 'postgres' user to run it as root): run scripts/setup.sh"))
struct PostgresLargeImportChecksProcessTests {
    let server: PostgresTestServer
    let database: String
    let store: PostgresUserRepository
    static let size = PostgresUserRepository.analyzeAfter

    init() throws {
        server = try PostgresTestServer.shared()
        database = try server.makeDatabase()
        store = try PostgresUserRepository(connection: try PGConnectionString(server.conninfo(database)))
    }

    func nothingImported(storedUsers: Int) async throws {
        await store.importCleanupFinished()
        #expect(try await store.fetchPage(PageRequest(limit: 1)).totalCount == storedUsers, "nothing of the refused import")
        #expect(try server.psql(database, "SELECT (SELECT COUNT(*) FROM imports) + (SELECT COUNT(*) FROM import_staged)")
            .trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }

    @Test func anAddressAStoredUserHasRefusesTheWholeImportNamingTheEntry() async throws {
        let stored = try await store.add(NewUser(name: "Stored", email: "taken@example.org"))
        var users = SampleUsers.generate(count: Self.size, seed: 41)
        users[9_499].email = "Taken@Example.org"
        let token = try await StagedImportTests.staged(store, users, chunk: 2_500)
        await #expect(throws: UserError.rejectedEntry(position: 9_500, id: users[9_499].id,
            reason: "the email address “Taken@Example.org” is already used by “Stored” (id \(stored.id.uuidString.lowercased())); each user needs an address of their own.")) {
            try await store.importStaging!.commitImport(token)
        }
        try await nothingImported(storedUsers: 1)
    }

    @Test func twoEntriesGivingOneAddressRefuseTheWholeImportNamingTheLater() async throws {
        var users = SampleUsers.generate(count: Self.size, seed: 42)
        users[Self.size - 1].email = users[99].email.uppercased()
        let token = try await StagedImportTests.staged(store, users, chunk: 2_500)
        await #expect {
            try await store.importStaging!.commitImport(token)
        } throws: { error in
            guard case .rejectedEntry(Self.size, users[Self.size - 1].id, let reason)? = error as? UserError else { return false }
            return reason.contains("is also given to another user, by entry 100")
        }
        try await nothingImported(storedUsers: 0)
    }

    @Test func theFirstBadEntryIsNamedWhicheverCheckFindsIt() async throws {
        let users = SampleUsers.generate(count: Self.size + 2, seed: 43)
        let kept = Array(users[Self.size...])  // two stored users
        _ = try await store.importUsers(kept)
        _ = try await store.update(User(id: kept[0].id, name: "Renamed", email: kept[0].email, avatarURL: kept[0].avatarURL, version: 1))
        func entries(staleAt stale: Int, takenAt taken: Int) -> [ImportEntry] {
            var file = StagedImportTests.entries(Array(users[..<Self.size]))
            file[stale - 1] = ImportEntry(position: stale, user: kept[0], expectedVersion: 1)  // stored is at 2
            file[taken - 1].user.email = kept[1].email
            return file
        }
        for (stale, taken, named) in [(50, 9_000, 50), (5_000, 20, 20)] {
            let staging = try #require(store.importStaging)
            let token = try await staging.beginImport()
            _ = try await staging.stage(entries(staleAt: stale, takenAt: taken), into: token)
            await #expect {
                try await staging.commitImport(token)
            } throws: { error in
                guard case .rejectedEntry(let position, _, _)? = error as? UserError else { return false }
                return position == named
            }
            try await nothingImported(storedUsers: 2)
        }
    }
}
