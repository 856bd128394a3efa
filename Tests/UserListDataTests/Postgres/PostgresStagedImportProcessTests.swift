import Foundation
import Testing
@testable import UserListData
import UserListDomain
import UserListTestSupport

/// The PostgreSQL store's durable all-or-nothing import, against a real server: staged entries
/// (sent with COPY) are invisible; a commit applies all or, at the first bad entry (named by
/// place in the file and id, as SQLite names it), none; versions are honest; history is
/// recorded; an import committed before a crash is finished by the next open.
@Suite(.serialized, .childProcesses, .enabled(if: PostgresTestServer.isAvailable,
                "PostgreSQL 15 is missing (/usr/lib/postgresql/15/bin, or no 'postgres' user to run it as root): run scripts/setup.sh"))
struct PostgresStagedImportProcessTests {
    static let alice = ChangeAuthor(uid: 1001, userName: "alice", client: "userctl", via: .command)

    func fresh() throws -> (server: PostgresTestServer, database: String, store: PostgresUserRepository) {
        let server = try PostgresTestServer.shared()
        let database = try server.makeDatabase()
        return (server, database, try PostgresUserRepository(connection: try PGConnectionString(server.conninfo(database))))
    }

    static func count(_ store: PostgresUserRepository) async throws -> Int? {
        try await store.fetchPage(PageRequest(limit: 1)).totalCount
    }

    @Test func stagedEntriesAreInvisibleUntilTheCommitAppliesThemAll() async throws {
        let (_, _, store) = try fresh()
        var users = SampleUsers.generate(count: 1_000, seed: 3)
        for (index, value) in PGCopyTextTests.hostile.enumerated() { users[index].name = "N" + value }  // through COPY and back
        users[20].avatarURL = nil
        let token = try await StagedImportTests.staged(store, users)
        #expect(try await Self.count(store) == 0)
        let summary = try await #require(store.importStaging).commitImport(token)
        #expect(summary == ImportSummary(read: 1_000, written: 1_000))
        #expect(try await Self.count(store) == 1_000)
        for user in users.prefix(21) { #expect(try await store.fetchUser(id: user.id) == user) }
        await #expect(throws: UserError.self) { try await store.importStaging!.commitImport(token) }
    }

    @Test func aBadEntryAtPositionNImportsNothingAndIsNamed() async throws {
        let (_, _, store) = try fresh()
        let stored = try await store.add(NewUser(name: "Stored", email: "taken@example.org"))
        var users = SampleUsers.generate(count: 500, seed: 4)
        users[349].email = "TAKEN@example.org"
        let token = try await StagedImportTests.staged(store, users)
        await #expect(throws: UserError.rejectedEntry(position: 350, id: users[349].id,
            reason: "the email address “TAKEN@example.org” is already used by “Stored” (id \(stored.id.uuidString.lowercased())); each user needs an address of their own.")) {
            try await store.importStaging!.commitImport(token)
        }
        #expect(try await Self.count(store) == 1)
        await #expect(throws: UserError.notFound(id: users[0].id)) { try await store.fetchUser(id: users[0].id) }
    }

    @Test func twoEntriesGivingOneAddressToTwoUsersImportNothingAndTheLaterIsNamed() async throws {
        let (_, _, store) = try fresh()
        var users = SampleUsers.generate(count: 10, seed: 7)
        users[6].email = users[2].email.uppercased()
        let token = try await StagedImportTests.staged(store, users, chunk: 4)
        await #expect {
            try await store.importStaging!.commitImport(token)
        } throws: { error in
            guard case .rejectedEntry(7, users[6].id, let reason)? = error as? UserError else { return false }
            return reason.contains("is also given to another user, by entry 3")
        }
        #expect(try await Self.count(store) == 0)
    }

    @Test func versionsAreHonestAndAStaleVersionImportsNothing() async throws {
        let (_, _, store) = try fresh()
        let users = SampleUsers.generate(count: 3, seed: 5)
        _ = try await store.importUsers(users)
        let renamed = try await store.update(User(id: users[1].id, name: "Renamed", email: users[1].email, avatarURL: users[1].avatarURL, version: 1))
        let staging = try #require(store.importStaging)

        var token = try await staging.beginImport()
        var changed = users[2]
        changed.name = "Changed"
        var lastWins = users[0]
        lastWins.name = "Not this one"
        _ = try await staging.stage([ImportEntry(position: 1, user: lastWins, expectedVersion: nil),
                                     ImportEntry(position: 2, user: users[0], expectedVersion: 7),
                                     ImportEntry(position: 3, user: changed, expectedVersion: nil)], into: token)
        #expect(try await staging.commitImport(token).written == 1)
        #expect(try await store.fetchUser(id: users[0].id) == users[0], "the last entry of an id wins; unchanged: not written")
        #expect(try await store.fetchUser(id: users[2].id).version == 2)

        token = try await staging.beginImport()
        var stale = users[1]
        stale.name = "From an old file"
        var other = changed
        other.name = "Changed again"
        _ = try await staging.stage([ImportEntry(position: 1, user: other, expectedVersion: nil),
                                     ImportEntry(position: 2, user: stale, expectedVersion: 1)], into: token)
        await #expect {
            try await staging.commitImport(token)
        } throws: { error in
            guard case .rejectedEntry(2, users[1].id, let reason)? = error as? UserError else { return false }
            return reason == "it names version 1 of this user, but the store holds version 2: "
                + "the user was changed after the file was made (export again, or drop \"version\" to overwrite)."
        }
        #expect(try await store.fetchUser(id: users[1].id) == renamed)
        #expect(try await store.fetchUser(id: users[2].id).name == "Changed", "nothing of the refused import")
    }

    @Test func theCommitRecordsEachAddedAndChangedUserAsTheAuthorsImport() async throws {
        let (_, _, store) = try fresh()
        let stored = SampleUsers.generate(count: 3, seed: 21)
        _ = try await store.importUsers(stored)
        let before = try await store.history(HistoryQuery(limit: 100)).entries.count
        var file = stored
        file[0].name = "Renamed By Import"
        let added = SampleUsers.generate(count: 2, seed: 22)
        file += added
        let token = try await StagedImportTests.staged(store, file)
        #expect(try await store.importStaging!.commitImport(token, by: Self.alice).written == 3)
        let entries = try await store.history(HistoryQuery(limit: 100)).entries.dropLast(before)
        #expect(entries.count == 1, "one entry for the import (issue 46 item 6)")
        #expect(entries.first?.batch == BatchSummary(source: nil, added: 2, updated: 1))
        #expect(entries.first?.author.userName == "alice" && entries.first?.author.via == .import)
        var byUser: [UUID: HistoryEntry] = [:]
        for user in file { byUser[user.id] = try await store.history(HistoryQuery(userID: user.id)).entries.first }
        #expect(byUser[file[0].id]?.kind == .saved && byUser[file[0].id]?.partOf == true)
        #expect(byUser[file[0].id]?.after?.name == "Renamed By Import")
        #expect(byUser[file[0].id]?.versionAfter == 2, "the version the merge gave it")
        for user in added { #expect(byUser[user.id]?.kind == .added && byUser[user.id]?.versionAfter == 1) }
    }

    @Test func anAbortedImportLeavesNothingStagedOrStored() async throws {
        let (server, database, store) = try fresh()
        let users = SampleUsers.generate(count: 300, seed: 9)
        let token = try await StagedImportTests.staged(store, users)
        #expect(try server.psql(database, "SELECT COUNT(*) FROM import_staged").trimmingCharacters(in: .whitespacesAndNewlines) == "300")
        await store.importStaging!.abortImport(token)
        #expect(try await Self.count(store) == 0)
        #expect(try server.psql(database, "SELECT (SELECT COUNT(*) FROM imports) + (SELECT COUNT(*) FROM import_staged)")
            .trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        await #expect(throws: UserError.self) { try await store.importStaging!.commitImport(token) }
    }

    @Test func aCommittedImportIsFinishedByTheNextOpenAndAnotherDaemonsStagingIsKept() async throws {
        let (server, database, store) = try fresh()
        let users = SampleUsers.generate(count: 2_000, seed: 6)
        let committed = try await StagedImportTests.staged(store, Array(users[..<1_500]))
        let staging = try await StagedImportTests.staged(store, Array(users[1_500...]))
        // What the commit writes before it merges, and a crash right after it.
        _ = try server.psql(database, "UPDATE imports SET state = 'committed' WHERE id = \(committed.rawValue)")
        let reopened = try PostgresUserRepository(connection: try PGConnectionString(server.conninfo(database)))
        #expect(try await Self.count(reopened) == 1_500)
        #expect(try await reopened.fetchUser(id: users[1_499].id) == users[1_499])
        await #expect(throws: UserError.notFound(id: users[1_500].id)) { try await reopened.fetchUser(id: users[1_500].id) }
        // The other import may be a live daemon's: still there, and its commit still works.
        #expect(try await reopened.importStaging!.commitImport(staging).written == 500)
        #expect(try await Self.count(store) == 2_000)
    }

    @Test func aStagingImportAbandonedForAnHourIsDroppedAtOpen() async throws {
        let (server, database, store) = try fresh()
        let token = try await StagedImportTests.staged(store, SampleUsers.generate(count: 10, seed: 10))
        _ = try server.psql(database, "UPDATE imports SET touched_at = now() - interval '61 minutes'")
        _ = try PostgresUserRepository(connection: try PGConnectionString(server.conninfo(database)))
        await #expect(throws: UserError.self) { try await store.importStaging!.commitImport(token) }
        #expect(try server.psql(database, "SELECT COUNT(*) FROM import_staged").trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }

    @Test func theFeedTurnsAMergedImportIntoOneResync() async throws {
        let (server, database, store) = try fresh()
        let elsewhere = try PostgresUserRepository(connection: try PGConnectionString(server.conninfo(database)))
        let feed = try PostgresChangeFeed(observing: store)
        let collector = ChangeCollector(feed)
        let token = try await StagedImportTests.staged(elsewhere, SampleUsers.generate(count: 200, seed: 11))
        _ = try await elsewhere.importStaging!.commitImport(token)
        let marker = try await elsewhere.add(NewUser(name: "After", email: "after@example.org"))
        let changes = await collector.wait(for: 2, timeout: .seconds(30))
        #expect(changes == [.resync, .added(marker)], "one resync for the 200 users, not a change each")
        _ = feed
    }
}
