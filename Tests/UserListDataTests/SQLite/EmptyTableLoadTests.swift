import CSQLite
import Foundation
import Testing
@testable import UserListData
import UserListDomain

/// A big import into an empty store is written many rows to a statement: it must leave exactly
/// the rows, keys and search the row-by-row import leaves, log one `reloaded` row that feeds
/// (in this process and in others) pass on as one `.resync`, and a file that names an id twice
/// still gets the row-by-row meaning (the later entry updates the earlier one).
@Suite struct EmptyTableLoadTests {
    static func loggedChanges(_ path: String) throws -> [String] {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { throw CancellationError() }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "SELECT kind, user_id FROM changes ORDER BY seq", -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        var rows: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            rows.append(String(cString: sqlite3_column_text(statement, 0)) + " " + String(cString: sqlite3_column_text(statement, 1)))
        }
        return rows
    }

    @Test func aLoadIntoAnEmptyStoreLeavesWhatTheRowByRowImportLeaves() async throws {
        let directory = try TemporaryDirectory()
        // More than a statement's worth past a multiple, so the last rows go one at a time.
        let users = SampleUsers.generate(count: SQLiteUserRepository.rebuildIndexesFrom + 3 * 64 + 5, seed: 21)
        let empty = try SQLiteUserRepository(path: directory.file("empty.sqlite"))
        #expect(try await empty.importUsers(users) == users.count)

        // The same users through the row-by-row path: a store holding one user, removed after.
        let other = try SQLiteUserRepository(path: directory.file("other.sqlite"))
        let placeholder = try await other.add(NewUser(name: "Placeholder", email: "placeholder@example.org"))
        #expect(try await other.importUsers(users) == users.count)
        try await other.remove(id: placeholder.id)

        #expect(try empty.exportJSON() == (try other.exportJSON()))
        #expect(try await empty.fetchPage(PageRequest(limit: 1)).totalCount == users.count)
        let someone = users[users.count - 2]
        let term = String(TextKey.fold(someone.email).dropFirst(3).prefix(9))
        #expect(try await empty.fetchPage(PageRequest(limit: 50, search: term)).users.map(\.id).contains(someone.id))
        #expect(try Self.loggedChanges(directory.file("empty.sqlite")) == ["reloaded "])
        let expectedLog = users.map { "added " + $0.id.uuidString }
        #expect(try Self.loggedChanges(directory.file("other.sqlite")).dropFirst().prefix(users.count) == expectedLog[...])
    }

    @Test func feedsHereAndInAnotherProcessPassTheLoadOnAsOneResync() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("feeds.sqlite")
        let store = try SQLiteUserRepository(path: path)
        let hereFeed = try SQLiteChangeFeed(observing: store, safetyInterval: .seconds(600))
        let here = ChangeCollector(hereFeed)
        // Another process's feed: its own store on the file, reading the log when the file changes.
        let elsewhereFeed = try SQLiteChangeFeed(observing: try SQLiteUserRepository(path: path))
        let elsewhere = ChangeCollector(elsewhereFeed)
        _ = try await store.importUsers(SampleUsers.generate(count: SQLiteUserRepository.rebuildIndexesFrom, seed: 23))
        let ada = try await store.add(NewUser(name: "Ada", email: "ada@example.com"))
        #expect(await here.wait(for: 2) == [.resync, .added(ada)])
        #expect(await elsewhere.wait(for: 2) == [.resync, .added(ada)])
        withExtendedLifetime((hereFeed, elsewhereFeed)) {}
    }

    @Test func anIdNamedTwiceIsAnUpdateOfTheFirstEntry() async throws {
        let directory = try TemporaryDirectory()
        var users = SampleUsers.generate(count: SQLiteUserRepository.rebuildIndexesFrom, seed: 22)
        var again = users[10]
        again.name = "Renamed In The Same File"
        users.append(again)
        let store = try SQLiteUserRepository(path: directory.file("twice.sqlite"))
        #expect(try await store.importUsers(users) == users.count)
        #expect(try await store.fetchPage(PageRequest(limit: 1)).totalCount == users.count - 1)
        let stored = try await store.fetchUser(id: again.id)
        #expect(stored.name == again.name && stored.version == users[10].version + 1)
    }
}
