import CSQLite
import Foundation
import Testing
@testable import UserListData
import UserListDomain

/// The SQLite store's all-or-nothing import: staged entries are invisible; a commit applies all
/// of them or, at the first bad entry (named by its place in the file), none; versions are
/// honest; an import committed before a crash is finished when the store is opened again, and
/// one never committed is dropped.
@Suite struct StagedImportTests {
    static func entries(_ users: [User], from first: Int = 1, versions: Bool = false) -> [ImportEntry] {
        users.enumerated().map { ImportEntry(position: first + $0.offset, user: $0.element, expectedVersion: versions ? $0.element.version : nil) }
    }

    /// Begins an import in `store`'s own staging and stages `users` in chunks, positions counted
    /// over the whole file (either store).
    static func staged(_ store: some UserRepository, _ users: [User], chunk: Int = 100) async throws -> ImportToken {
        let staging = try #require(store.importStaging)
        let token = try await staging.beginImport()
        var start = 0
        while start < users.count {
            let end = min(users.count, start + chunk)
            _ = try await staging.stage(Self.entries(Array(users[start..<end]), from: start + 1), into: token)
            start = end
        }
        return token
    }

    static func execute(_ path: String, _ sql: String) {
        var db: OpaquePointer?
        sqlite3_open(path, &db)
        sqlite3_exec(db, sql, nil, nil, nil)
        sqlite3_close(db)
    }

    @Test func stagedEntriesAreInvisibleUntilTheCommitAppliesThemAll() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("s.sqlite"))
        let users = SampleUsers.generate(count: 1_000, seed: 3)
        let token = try await Self.staged(store, users)
        #expect(try await store.fetchPage(PageRequest(limit: 1)).totalCount == 0)
        let summary = try await #require(store.importStaging).commitImport(token)
        #expect(summary == ImportSummary(read: 1_000, written: 1_000))
        #expect(try await store.fetchPage(PageRequest(limit: 1)).totalCount == 1_000)
        // The token is spent.
        await #expect(throws: UserError.self) { try await store.importStaging!.commitImport(token) }
    }

    /// userctl's chunks (5,000 users) are bigger than a SQLite staging transaction
    /// (`SQLiteImportStaging.stageSlice`): one chunk is staged slice by slice, counted whole.
    @Test func aChunkLargerThanASliceIsStagedWholeAndCounted() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("s.sqlite"))
        let users = SampleUsers.generate(count: SQLiteImportStaging.stageSlice * 2 + 500, seed: 31)
        let staging = try #require(store.importStaging)
        let token = try await staging.beginImport()
        #expect(try await staging.stage(Self.entries(users), into: token) == users.count)
        #expect(try await staging.commitImport(token) == ImportSummary(read: users.count, written: users.count))
        #expect(try await store.fetchUser(id: users[users.count - 1].id) == users[users.count - 1])
    }

    @Test func aDuplicateEmailAnywhereImportsNothingAndNamesTheEntry() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("s.sqlite"))
        let stored = try await store.add(NewUser(name: "Stored", email: "taken@example.org"))
        var users = SampleUsers.generate(count: 500, seed: 4)
        users[349].email = "TAKEN@example.org"
        let token = try await Self.staged(store, users)
        await #expect(throws: UserError.rejectedEntry(position: 350, id: users[349].id,
            reason: "the email address “TAKEN@example.org” is already used by “Stored” (id \(stored.id.uuidString.lowercased())); each user needs an address of their own.")) {
            try await store.importStaging!.commitImport(token)
        }
        #expect(try await store.fetchPage(PageRequest(limit: 1)).totalCount == 1)
    }

    @Test func versionsAreHonest() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("s.sqlite"))
        let users = SampleUsers.generate(count: 3, seed: 5)
        _ = try await store.importUsers(users)
        let renamed = try await store.update(User(id: users[1].id, name: "Renamed", email: users[1].email, avatarURL: users[1].avatarURL, version: 1))
        #expect(renamed.version == 2)
        let staging = try #require(store.importStaging)

        // Unchanged (even naming a higher version): not written. Changed: the stored version + 1.
        var token = try await staging.beginImport()
        var changed = users[2]
        changed.name = "Changed"
        _ = try await staging.stage([ImportEntry(position: 1, user: users[0], expectedVersion: 7),
                                     ImportEntry(position: 2, user: changed, expectedVersion: nil)], into: token)
        #expect(try await staging.commitImport(token).written == 1)
        #expect(try await store.fetchUser(id: users[0].id).version == 1)
        #expect(try await store.fetchUser(id: users[2].id).version == 2)

        // An entry made from version 1 of a user now at version 2: a conflict, nothing written.
        token = try await staging.beginImport()
        var stale = users[1]
        stale.name = "From an old file"
        _ = try await staging.stage([ImportEntry(position: 1, user: changed, expectedVersion: nil),
                                     ImportEntry(position: 2, user: stale, expectedVersion: 1)], into: token)
        await #expect {
            try await staging.commitImport(token)
        } throws: { error in
            guard case .rejectedEntry(2, users[1].id, let reason)? = error as? UserError else { return false }
            return reason.contains("store holds version 2")
        }
        #expect(try await store.fetchUser(id: users[1].id) == renamed)
    }

    @Test func aCommittedImportIsFinishedWhenTheStoreOpensAgainAndAnUncommittedOneDropped() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("s.sqlite")
        let users = SampleUsers.generate(count: 2_000, seed: 6)
        do {
            let store = try SQLiteUserRepository(path: path)
            let committed = try await Self.staged(store, Array(users[..<1_500]))
            _ = try await Self.staged(store, Array(users[1_500...]))
            // What the commit writes before it merges, and a crash right after it.
            Self.execute(path, "UPDATE imports SET state = 'committed' WHERE id = \(committed.rawValue)")
        }
        let reopened = try SQLiteUserRepository(path: path)
        #expect(try await reopened.fetchPage(PageRequest(limit: 1)).totalCount == 1_500)
        #expect(try await reopened.fetchUser(id: users[1_499].id) == users[1_499])
        await #expect(throws: UserError.notFound(id: users[1_500].id)) { try await reopened.fetchUser(id: users[1_500].id) }
        // Nothing is left staged.
        let left = try reopened.read { connection throws(SQLiteError) in
            try connection.integer("SELECT (SELECT COUNT(*) FROM imports) + (SELECT COUNT(*) FROM import_staged)", "test")
        }
        #expect(left == 0)
    }

    @Test func twoEntriesGivingOneAddressToTwoUsersImportNothingAndTheLaterIsNamed() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("s.sqlite"))
        var users = SampleUsers.generate(count: 10, seed: 7)
        users[6].email = users[2].email.uppercased()
        let token = try await Self.staged(store, users, chunk: 4)
        await #expect {
            try await store.importStaging!.commitImport(token)
        } throws: { error in
            guard case .rejectedEntry(7, users[6].id, let reason)? = error as? UserError else { return false }
            return reason.contains("by entry 3")
        }
        #expect(try await store.fetchPage(PageRequest(limit: 1)).totalCount == 0)
    }

    @Test func anImportBiggerThanTheStoreRebuildsItsIndexesAndSearchCatchesUp() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("s.sqlite"))
        _ = try await store.add(NewUser(name: "Already Here", email: "here@example.org"))
        let users = SampleUsers.generate(count: SQLiteUserRepository.rebuildIndexesFrom + 10, seed: 8)
        let token = try await Self.staged(store, users, chunk: 1_000)
        #expect(try await store.importStaging!.commitImport(token).written == users.count)
        await store.searchIndexCaughtUp()
        let last = users[users.count - 1]
        let found = try await store.fetchPage(PageRequest(limit: 5, search: last.email))
        #expect(found.users.contains(last), "\(found.users)")
        #expect(try await store.fetchPage(PageRequest(limit: 1)).totalCount == users.count + 1)
        // The unique email index is back: a second user with a taken address is refused.
        await #expect(throws: UserError.self) { try await store.add(NewUser(name: "Copy", email: last.email)) }
    }
}
