import Foundation
import Testing
@testable import UserListData
import UserListDomain

/// The merge of a staged import (`SQLiteImportMerge`, set-based a slice at a time): the last entry of an id given
/// twice is the one merged, and counted once; a committed import is one `reloaded` row in the
/// change log (none when it changes nothing); an import smaller than the store leaves the users
/// it adds, and the stored users whose keys it changes, to the search index's catch-up, so a
/// search answers as the whole index would before, during and after the catch-up.
@Suite struct StagedImportMergeTests {
    static func changeKinds(_ store: SQLiteUserRepository, after seq: Int) throws -> [String] {
        try store.read { connection throws(SQLiteError) in
            let statement = try connection.statement("SELECT kind FROM changes WHERE seq > ?1 ORDER BY seq")
            defer { statement.reset() }
            statement.bind(1, seq)
            var kinds: [String] = []
            while try statement.step("test") { kinds.append(statement.text(0)) }
            return kinds
        }
    }

    static func lastSeq(_ store: SQLiteUserRepository) throws -> Int {
        try store.read { connection throws(SQLiteError) in try connection.integer("SELECT ifnull(max(seq), 0) FROM changes", "test") }
    }

    /// A store at `directory`'s `s.sqlite` holding `count` sample users, all indexed for search,
    /// whose index never catches up by itself.
    static func indexedStore(_ directory: TemporaryDirectory, count: Int,
                             seed: UInt64) async throws -> (path: String, store: SQLiteUserRepository, users: [User]) {
        let path = directory.file("s.sqlite")
        let store = try SearchBacklogTests.storeLeavingTheBacklog(path)
        let users = SampleUsers.generate(count: count, seed: seed)
        _ = try await store.importUsers(users)
        #expect(try SearchBacklogTests.mark(path) == nil, "a small import into an empty store indexes as it goes")
        return (path, store, users)
    }

    /// Another process opens the store at `path` and catches its index up: nothing is left
    /// stale or past the mark, searches for `terms` answer as over `users`, and the index holds
    /// each user once, sound.
    static func caughtUp(_ path: String, _ users: [User], terms: [String]) async throws -> SQLiteUserRepository {
        let next = try SQLiteUserRepository(path: path)
        await next.searchIndexCaughtUp()
        #expect(try SearchBacklogTests.mark(path) == nil)
        #expect(try SearchBacklogTests.stale(path) == 0)
        try await SearchBacklogTests.expectSearchesMatch(next, users, terms: terms)
        let connection = try SQLiteConnection(path: path, mode: .readWrite, busyTimeoutMilliseconds: 5_000)
        #expect(try connection.integer("SELECT COUNT(*) FROM users_search", "counting") == users.count)
        try connection.execute("INSERT INTO users_search (users_search, rank) VALUES ('integrity-check', 0)", "checking")
        return next
    }

    @Test func theLastEntryOfAnIDGivenTwiceIsMergedAndCountedOnce() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("s.sqlite"))
        let stored = SampleUsers.generate(count: 3, seed: 51)
        _ = try await store.importUsers(stored)
        var fresh = SampleUsers.generate(count: 1, seed: 52)[0]
        fresh.email = "fresh@merge.example"
        var firstSpelling = fresh
        firstSpelling.name = "First Spelling"
        var earlier = stored[0], later = stored[0]
        earlier.name = "Earlier"
        later.name = "Later"
        let staging = try #require(store.importStaging)
        let token = try await staging.beginImport()
        _ = try await staging.stage([ImportEntry(position: 1, user: firstSpelling, expectedVersion: 4),
                                     ImportEntry(position: 2, user: later, expectedVersion: nil),
                                     ImportEntry(position: 3, user: fresh, expectedVersion: nil),
                                     ImportEntry(position: 4, user: earlier, expectedVersion: nil),
                                     ImportEntry(position: 5, user: later, expectedVersion: nil)], into: token)
        let seq = try Self.lastSeq(store)
        #expect(try await staging.commitImport(token) == ImportSummary(read: 5, written: 2))
        // The new user as its last entry gives it (no version named: 1), the stored one changed once.
        #expect(try await store.fetchUser(id: fresh.id) == fresh)
        #expect(try await store.fetchUser(id: stored[0].id).name == "Later")
        #expect(try await store.fetchUser(id: stored[0].id).version == 2)
        #expect(try await store.fetchPage(PageRequest(limit: 1)).totalCount == 4)
        #expect(try Self.changeKinds(store, after: seq) == ["reloaded"])

        // The same file again changes nothing, and tells nobody.
        let again = try await staging.beginImport()
        _ = try await staging.stage([ImportEntry(position: 1, user: fresh, expectedVersion: nil),
                                     ImportEntry(position: 2, user: later, expectedVersion: nil)], into: again)
        let before = try Self.lastSeq(store)
        #expect(try await staging.commitImport(again) == ImportSummary(read: 2, written: 0))
        #expect(try Self.changeKinds(store, after: before).isEmpty)
        #expect(try await store.fetchUser(id: stored[0].id).version == 2)
    }

    @Test func anImportSmallerThanTheStoreLeavesNewAndRenamedUsersToTheCatchUp() async throws {
        let directory = try TemporaryDirectory()
        let (path, store, stored) = try await Self.indexedStore(directory, count: 2_000, seed: 53)
        var users = stored

        var file = SampleUsers.generate(count: 300, seed: 54).enumerated().map { index, user in
            User(id: user.id, name: user.name, email: "new\(index)@merge.example", avatarURL: user.avatarURL, version: 1)
        }
        let added = file
        let oldNames = [3, 700, 1_500].map { users[$0].name }
        for index in [3, 700, 1_500] {
            users[index].name = "Renamed Quokkaberg \(index)"
            file.append(users[index])
        }
        file.append(users[9])  // as stored: not written
        let token = try await StagedImportTests.staged(store, file.shuffled(), chunk: 64)
        #expect(try await store.importStaging!.commitImport(token).written == 303)
        var all = users + added

        #expect(try SearchBacklogTests.mark(path) == 2_000, "the added users lie past the mark, for the catch-up")
        #expect(try SearchBacklogTests.stale(path) == 3, "the renamed users' entries are left to the catch-up")
        #expect(try SearchBacklogTests.indexed(path, "berg 3") == 0)
        #expect(try SearchBacklogTests.indexed(path, "new12@merge") == 0)
        var terms = ["quokkaberg", "berg 700", "new12@merge", "w29@merg", "xyzzy"]
        terms += oldNames.map { String(TextKey.fold($0).prefix(9)) }
        try await SearchBacklogTests.expectSearchesMatch(store, all, terms: terms, countsMayBeLeftOut: true)

        // Before the catch-up: a stale user saved again, another removed; the triggers leave both.
        var twice = try await store.fetchUser(id: all[700].id)
        twice.name = "Twice Quokkaberg 700"
        all[700] = try await store.update(twice)
        try await store.remove(id: all[3].id)
        all.remove(at: 3)
        terms += ["twice quo"]
        try await SearchBacklogTests.expectSearchesMatch(store, all, terms: terms, countsMayBeLeftOut: true)
        #expect(try SearchBacklogTests.stale(path) == 3)

        let next = try await Self.caughtUp(path, all, terms: terms)
        #expect(try SearchBacklogTests.indexed(path, "berg 3") == 0, "the removed user's entry went with it")
        #expect(try SearchBacklogTests.indexed(path, "twice quo") == 1)
        #expect(try SearchBacklogTests.indexed(path, "berg 1500") == 1)
        #expect(try await next.fetchPage(PageRequest(limit: 1)).totalCount == all.count)
    }

    /// A user whose entry is stale is removed, and a new user takes its rowid (SQLite gives the
    /// largest rowid + 1): searches find the new user and not the old one, before the catch-up
    /// and after it, and the index then holds the new user's entry and nothing of the old one's.
    @Test func aNewUserOnAStaleUsersRowidIsFoundAndTheOldOneIsNot() async throws {
        let directory = try TemporaryDirectory()
        let (path, store, stored) = try await Self.indexedStore(directory, count: 500, seed: 57)
        var users = stored
        // The last user, the largest rowid, renamed by an import that adds nobody.
        users[499].name = "Stale Quokkaberg"
        #expect(try await store.importStaging!.commitImport(try await StagedImportTests.staged(store, [users[499]]))
            .written == 1)
        #expect(try SearchBacklogTests.stale(path) == 1)
        let rowid = { (id: UUID) throws -> Int in
            try store.read { connection throws(SQLiteError) in
                try connection.integer("SELECT rowid FROM users WHERE id = '\(id.uuidString)'", "test")
            }
        }
        let staleRowid = try rowid(users[499].id)
        try await store.remove(id: users[499].id)
        users.removeLast()
        users.append(try await store.add(NewUser(name: "Fresh Wombatson", email: "fresh@wombat.example")))
        #expect(try rowid(users[499].id) == staleRowid, "the new user took the removed one's rowid")
        let terms = ["quokkaberg", "wombatson", "fresh@wom"]
        try await SearchBacklogTests.expectSearchesMatch(store, users, terms: terms, countsMayBeLeftOut: true)

        _ = try await Self.caughtUp(path, users, terms: terms)
        #expect(try SearchBacklogTests.indexed(path, "wombatson") == 1)
        #expect(try SearchBacklogTests.indexed(path, "quokkaberg") == 0)
    }
}
