import CSQLite
import Foundation
import Testing
@testable import UserListData
import UserListDomain

/// The order the stores promise: the folded name (`UserKey.fold`) compared as UTF-8 bytes, then id.
func listOrder(_ users: [User]) -> [User] {
    users.sorted { a, b in
        let ka = Array(UserKey.fold(a.name).utf8), kb = Array(UserKey.fold(b.name).utf8)
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

/// What only the SQLite store does (its file format, its query plans); what every store does is
/// in `UserRepositoryContractTests`.
@Suite struct SQLiteUserRepositoryTests {
    @Test func pagesUseTheKeysetIndexNotOffset() throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("users.sqlite"))
        let plan = try store.queryPlan(
            "SELECT id FROM users WHERE (name_key, id) > ('m', '') ORDER BY name_key, id LIMIT 51")
        #expect(plan.joined().contains("users_by_name_key"), "\(plan)")
        #expect(!plan.joined().contains("TEMP B-TREE"), "\(plan)")
    }

    /// The last page ("G") reads the same index from its far end: no sort, no scan.
    @Test func backwardPagesReadTheKeysetIndexFromTheEnd() throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("users.sqlite"))
        for sql in ["SELECT id FROM users ORDER BY name_key DESC, id DESC LIMIT 51",
                    "SELECT id FROM users WHERE (name_key, id) < ('m', '') ORDER BY name_key DESC, id DESC LIMIT 51"] {
            let plan = try store.queryPlan(sql)
            #expect(plan.joined().contains("users_by_name_key"), "\(plan)")
            #expect(!plan.joined().contains("TEMP B-TREE"), "\(plan)")
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

    /// Version 7 copies the change log into a table that allows `reloaded`: every row stays,
    /// and `seq` goes on from where the old counter was, even past rows already pruned.
    @Test func aVersion6FileKeepsItsChangeLogAndCounterAcrossVersion7() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("v6.sqlite")
        var db: OpaquePointer?
        #expect(sqlite3_open(path, &db) == SQLITE_OK)
        UserKey.register(on: db!)
        let ids = (0..<3).map { _ in UUID() }
        let sql = SQLiteSchema.steps.filter { $0.version <= 6 }.map(\.sql).joined(separator: ";\n") + """
            ;
            INSERT INTO users (id, name, email, name_key, email_key) VALUES
                ('\(ids[0].uuidString)', 'Ada', 'ada@example.com', 'ada', 'ada@example.com'),
                ('\(ids[1].uuidString)', 'Grace', 'grace@example.com', 'grace', 'grace@example.com'),
                ('\(ids[2].uuidString)', 'Alan', 'alan@example.com', 'alan', 'alan@example.com');
            DELETE FROM changes WHERE seq = 3;
            PRAGMA user_version = 6;
            """
        #expect(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK, "\(String(cString: sqlite3_errmsg(db)))")
        sqlite3_close(db)

        let store = try SQLiteUserRepository(path: path)
        let barbara = try await store.add(NewUser(name: "Barbara", email: "barbara@example.com"))
        let connection = try SQLiteConnection(path: path, mode: .readOnly, busyTimeoutMilliseconds: 5_000)
        let log = try connection.statement("SELECT seq, kind, user_id FROM changes ORDER BY seq")
        var rows: [String] = []
        while try log.step("reading") { rows.append("\(log.int(0)) \(log.text(1)) \(log.text(2))") }
        log.reset()
        #expect(rows == ["1 added \(ids[0].uuidString)", "2 added \(ids[1].uuidString)", "4 added \(barbara.id.uuidString)"])
        #expect(try connection.integer("PRAGMA user_version", "reading") == SQLiteSchema.currentVersion)
        #expect(try await store.fetchPage(PageRequest(search: "race@exa")).users.map(\.id) == [ids[1]])
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
