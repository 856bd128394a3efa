import CSQLite
import Foundation
import Testing
@testable import UserListData
import UserListDomain

/// The order the store promises: the folded name (`TextKey`) compared as UTF-8 bytes, then id.
func listOrder(_ users: [User]) -> [User] {
    users.sorted { a, b in
        let ka = Array(TextKey.fold(a.name).utf8), kb = Array(TextKey.fold(b.name).utf8)
        if ka != kb { return ka.lexicographicallyPrecedes(kb) }
        return a.id.uuidString < b.id.uuidString
    }
}

/// Walks every page of `request` and returns the users in the order they came.
func walk(_ repository: any UserRepository, _ request: PageRequest) async throws -> (users: [User], pages: [UserPage]) {
    var request = request
    var users: [User] = []
    var pages: [UserPage] = []
    while true {
        let page = try await repository.fetchPage(request)
        pages.append(page)
        users += page.users
        guard let next = page.next else { break }
        request.after = next
    }
    return (users, pages)
}

func outcome<T>(_ body: () async throws(UserError) -> T) async -> Result<T, UserError> {
    do { return .success(try await body()) } catch { return .failure(error) }
}

@Suite struct SQLiteUserRepositoryTests {
    @Test func reopeningKeepsTheData() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("users.sqlite")
        let users = SampleUsers.generate(count: 20, seed: 1)
        do {
            let store = try SQLiteUserRepository(path: path)
            #expect(try await store.importUsers(users) == 20)
            var edited = users[3]
            edited.name = "Renamed Person"
            _ = try await store.update(edited)
        }
        let reopened = try SQLiteUserRepository(path: path)
        let page = try await reopened.fetchPage(PageRequest(limit: 100))
        #expect(page.users.count == 20)
        #expect(page.totalCount == 20)
        let renamed = try await reopened.fetchUser(id: users[3].id)
        #expect(renamed.name == "Renamed Person")
        #expect(renamed.version == 2)
    }

    @Test func keysetPagesWalkEveryUserOnceInOrder() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("users.sqlite"))
        var users = SampleUsers.generate(count: 1_234, seed: 7)
        // Names that differ only by case must still have a stable order (by id).
        for i in 0..<6 { users[i].name = i.isMultiple(of: 2) ? "same name" : "SAME NAME" }
        _ = try await store.importUsers(users)

        let (walked, pages) = try await walk(store, PageRequest(limit: 50))
        #expect(walked == listOrder(users))
        #expect(Set(walked.map(\.id)).count == users.count)
        #expect(pages.count == 25)
        #expect(pages.allSatisfy { $0.totalCount == 1_234 && !$0.isStale })
        #expect(pages.last?.next == nil)
    }

    @Test(arguments: ["a", "Zo", "ZOË", "王", "김", "jose.", "DJ", "þÓ", "Σο", "nothing-matches-this"])
    func searchPagesWalkEveryMatchOnceInOrder(search: String) async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("users.sqlite"))
        let users = SampleUsers.generate(count: 2_000, seed: 9)
        _ = try await store.importUsers(users)
        let prefix = TextKey.fold(search)
        let expected = listOrder(users.filter {
            TextKey.matches(search, name: $0.name, email: $0.email)
        })
        let (walked, pages) = try await walk(store, PageRequest(limit: 37, search: search))
        #expect(walked == expected)
        #expect(pages.allSatisfy { $0.totalCount == expected.count })
        if search != "nothing-matches-this" { #expect(!expected.isEmpty) }
    }

    @Test func pagesUseTheKeysetIndexNotOffset() throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("users.sqlite"))
        let plan = try store.queryPlan(
            "SELECT id FROM users WHERE (name_key, id) > ('m', '') ORDER BY name_key, id LIMIT 51")
        #expect(plan.joined().contains("users_by_name_key"), "\(plan)")
        #expect(!plan.joined().contains("TEMP B-TREE"), "\(plan)")
    }

    @Test func updateBumpsTheVersionAndRefusesStaleOrMissingUsers() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("users.sqlite"))
        let ada = try await store.add(NewUser(name: "Ada Lovelace", email: "ada@example.com"))
        #expect(ada.version == 1)
        var edited = ada
        edited.name = "Ada King"
        let saved = try await store.update(edited)
        #expect(saved.version == 2)
        #expect(try await store.fetchUser(id: ada.id) == saved)

        await #expect(throws: UserError.conflict(stored: saved)) { _ = try await store.update(edited) }
        let ghost = User(id: UUID(), name: "Nobody", email: "no@example.com")
        await #expect(throws: UserError.notFound(id: ghost.id)) { _ = try await store.update(ghost) }
        await #expect(throws: UserError.notFound(id: ghost.id)) { _ = try await store.fetchUser(id: ghost.id) }
    }

    @Test func addingATakenIdIsAConflictCarryingTheStoredUser() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("users.sqlite"))
        let ada = try await store.add(NewUser(name: "Ada", email: "ada@example.com"))
        await #expect(throws: UserError.conflict(stored: ada)) {
            _ = try await store.add(NewUser(id: ada.id, name: "Impostor", email: "x@example.com"))
        }
    }

    @Test func removingDeletesOnceThenReportsNotFound() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("users.sqlite"))
        let ada = try await store.add(NewUser(name: "Ada", email: "ada@example.com"))
        try await store.remove(id: ada.id)
        await #expect(throws: UserError.notFound(id: ada.id)) { try await store.remove(id: ada.id) }
        #expect(try await store.fetchPage(PageRequest()).totalCount == 0)
    }

    @Test func twoWritersOnOneUserGiveOneSuccessAndOneConflict() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("users.sqlite")
        let first = try SQLiteUserRepository(path: path)
        let second = try SQLiteUserRepository(path: path)
        for round in 0..<20 {
            let user = try await first.add(NewUser(name: "Round \(round)", email: "r\(round)@example.com"))
            var a = user, b = user
            a.name = "Alice's edit"
            b.name = "Bob's edit"
            async let resultA = outcome { () async throws(UserError) -> User in try await first.update(a) }
            async let resultB = outcome { () async throws(UserError) -> User in try await second.update(b) }
            let results = await [resultA, resultB]
            let successes = results.compactMap { try? $0.get() }
            #expect(successes.count == 1)
            let stored = try await first.fetchUser(id: user.id)
            #expect(successes.first == stored)
            #expect(stored.version == 2)
            let conflicts = results.filter {
                if case .failure(.conflict(let carried)) = $0 { return carried == stored }
                return false
            }
            #expect(conflicts.count == 1, "round \(round): \(results)")
        }
    }

    @Test func aVersion1FileIsMigratedKeepingItsRows() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("old.sqlite")
        // Build the file the first release wrote, by hand.
        var db: OpaquePointer?
        #expect(sqlite3_open(path, &db) == SQLITE_OK)
        let ids = (0..<4).map { _ in UUID() }
        let sql = SQLiteSchema.v1 + """
            INSERT INTO users (id, name, email, avatar_url, version) VALUES
                ('\(ids[0].uuidString)', 'Émile Zola', 'EMILE@example.com', NULL, 3),
                ('\(ids[1].uuidString)', 'ada lovelace', 'ada@example.com', 'https://a.example/a.png', 1),
                ('\(ids[2].uuidString)', 'Zoë Brontë', 'zoe@example.com', NULL, 2),
                ('\(ids[3].uuidString)', 'Ángel García', 'angel@example.com', NULL, 1);
            PRAGMA user_version = 1;
            """
        #expect(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK)
        sqlite3_close(db)

        let store = try SQLiteUserRepository(path: path)
        let page = try await store.fetchPage(PageRequest(limit: 10))
        #expect(page.users.map(\.name) == ["ada lovelace", "Ángel García", "Émile Zola", "Zoë Brontë"])
        #expect(page.totalCount == 4)
        #expect(try await store.fetchUser(id: ids[0]).version == 3)
        // The backfilled keys serve search, including non-ASCII case folding.
        #expect(try await store.fetchPage(PageRequest(search: "émi")).users.map(\.id) == [ids[0]])
        #expect(try await store.fetchPage(PageRequest(search: "ÁNG")).users.map(\.id) == [ids[3]])
        #expect(try await store.fetchPage(PageRequest(search: "emile@")).users.map(\.id) == [ids[0]])

        var check: OpaquePointer?
        sqlite3_open(path, &check)
        defer { sqlite3_close(check) }
        var statement: OpaquePointer?
        sqlite3_prepare_v2(check, "PRAGMA user_version", -1, &statement, nil)
        sqlite3_step(statement)
        #expect(sqlite3_column_int(statement, 0) == Int32(SQLiteSchema.currentVersion))
        sqlite3_finalize(statement)
    }

    @Test func aFileFromANewerReleaseIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("future.sqlite")
        var db: OpaquePointer?
        sqlite3_open(path, &db)
        sqlite3_exec(db, "PRAGMA user_version = 99", nil, nil, nil)
        sqlite3_close(db)
        #expect {
            _ = try SQLiteUserRepository(path: path)
        } throws: { error in
            guard case .unavailable(let reason) = error as? UserError else { return false }
            return reason.contains(path) && reason.contains("99")
        }
    }
}
