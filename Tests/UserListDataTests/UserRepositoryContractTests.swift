import Foundation
import Testing
@testable import UserListData
import UserListDomain
import UserListTestSupport

/// What every `UserRepository` store promises, run against each store: SQLite and PostgreSQL
/// must page, search, version and import identically.
@Suite(.serialized, .childProcesses) struct UserRepositoryContractTests {
    @Test(arguments: StoreKind.allCases)
    func reopeningKeepsTheData(kind: StoreKind) async throws {
        let fixture = try kind.makeFixture()
        let users = SampleUsers.generate(count: 20, seed: 1)
        do {
            let store = try fixture.open()
            #expect(try await store.importUsers(users) == 20)
            var edited = users[3]
            edited.name = "Renamed Person"
            _ = try await store.update(edited)
        }
        let reopened = try fixture.open()
        let page = try await reopened.fetchPage(PageRequest(limit: 100))
        #expect(page.users.count == 20)
        #expect(page.totalCount == 20)
        let renamed = try await reopened.fetchUser(id: users[3].id)
        #expect(renamed.name == "Renamed Person")
        #expect(renamed.version == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func keysetPagesWalkEveryUserOnceInOrder(kind: StoreKind) async throws {
        let store = try kind.makeFixture().open()
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

    /// Issue 27 item 5: the users whose id starts with a prefix, in id order, up to the limit;
    /// hyphens and case in the prefix do not matter, and a prefix nobody has finds nobody.
    @Test(arguments: StoreKind.allCases)
    func usersAreFoundByTheStartOfTheirID(kind: StoreKind) async throws {
        let store = try kind.makeFixture().open()
        let users = SampleUsers.generate(count: 500, seed: 5)
        _ = try await store.importUsers(users)
        let ids = users.map { UUIDText.lowercase($0.id) }
        for text in ["a", "0", "F", String(ids[17].prefix(3)), String(ids[17].prefix(10)).uppercased(), ids[17]] {
            let prefix = try #require(UserIDPrefix(text))
            let expected = users.filter { prefix.matches($0.id) }.sorted { UUIDText.lowercase($0.id) < UUIDText.lowercase($1.id) }
            #expect(try await store.users(withIDPrefix: prefix, limit: 100) == Array(expected.prefix(100)), "\(text)")
            #expect(try await store.users(withIDPrefix: prefix, limit: 2) == Array(expected.prefix(2)), "\(text), limit 2")
        }
        let unused = try #require((0..<4096).map { String(format: "%03x", $0) }.first { p in !ids.contains { $0.hasPrefix(p) } })
        #expect(try await store.users(withIDPrefix: try #require(UserIDPrefix(unused)), limit: 10).isEmpty)
    }

    static let searches = ["a", "Zo", "ZOË", "王", "김", "jose.", "DJ", "þÓ", "Σο", "nothing-matches-this"]

    /// A list that drops rows past its loaded pages continues from a cursor made after its last
    /// kept row: the next page is exactly the rows after it, in a search too (with its total).
    @Test(arguments: StoreKind.allCases, ["", "a"])
    func aCursorAfterAUserContinuesTheListRightAfterIt(kind: StoreKind, search: String) async throws {
        let store = try kind.makeFixture().open()
        let users = SampleUsers.generate(count: 300, seed: 11)
        _ = try await store.importUsers(users)
        let term: String? = search.isEmpty ? nil : search
        let expected = listOrder(users.filter { user in term.map { TextKey.matches($0, name: user.name, email: user.email) } ?? true })
        let kept = expected[40]
        let total = term == nil ? nil : expected.count
        let cursor = try #require(store.cursor(after: kept, totalCount: total))
        let page = try await store.fetchPage(PageRequest(after: cursor, limit: 25, search: term))
        #expect(page.users == Array(expected[41..<66]))
        #expect(page.totalCount == expected.count)
    }

    @Test(arguments: StoreKind.allCases, searches)
    func searchPagesWalkEveryMatchOnceInOrder(kind: StoreKind, search: String) async throws {
        let store = try kind.makeFixture().open()
        let users = SampleUsers.generate(count: 2_000, seed: 9)
        _ = try await store.importUsers(users)
        let expected = listOrder(users.filter { TextKey.matches(search, name: $0.name, email: $0.email) })
        let (walked, pages) = try await walk(store, PageRequest(limit: 37, search: search))
        #expect(walked == expected)
        #expect(pages.allSatisfy { $0.totalCount == expected.count })
        if search != "nothing-matches-this" { #expect(!expected.isEmpty) }
    }

    /// "G": the last page read directly, then backward to the first user, in list order.
    @Test(arguments: StoreKind.allCases, [nil, "a", "jose.", "nothing-matches-this"])
    func backwardPagesWalkFromTheEndToTheFirstUser(kind: StoreKind, search: String?) async throws {
        let store = try kind.makeFixture().open()
        var users = SampleUsers.generate(count: 1_234, seed: 7)
        for i in 0..<6 { users[i].name = i.isMultiple(of: 2) ? "same name" : "SAME NAME" }
        _ = try await store.importUsers(users)
        let expected = listOrder(users.filter { user in
            guard let search else { return true }
            return TextKey.matches(search, name: user.name, email: user.email)
        })

        var request = BackwardPageRequest(limit: 50, search: search)
        var walked: [User] = []
        var pages: [UserPage] = []
        while true {
            let page = try await store.fetchPage(request)
            pages.append(page)
            walked = page.users + walked
            guard let previous = page.previous else { break }
            request.before = previous
        }
        #expect(walked == expected)
        #expect(pages.first?.users == Array(expected.suffix(50)))
        #expect(pages.allSatisfy { $0.next == nil && $0.users.count <= 50 })
        #expect(pages.count == max(1, (expected.count + 49) / 50))
        if search == nil { #expect(pages.allSatisfy { $0.totalCount == 1_234 }) }
    }

    @Test(arguments: StoreKind.allCases)
    func updateBumpsTheVersionAndRefusesStaleOrMissingUsers(kind: StoreKind) async throws {
        let store = try kind.makeFixture().open()
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

    @Test(arguments: StoreKind.allCases)
    func addingATakenIdIsAConflictCarryingTheStoredUser(kind: StoreKind) async throws {
        let store = try kind.makeFixture().open()
        let ada = try await store.add(NewUser(name: "Ada", email: "ada@example.com"))
        await #expect(throws: UserError.conflict(stored: ada)) {
            _ = try await store.add(NewUser(id: ada.id, name: "Impostor", email: "x@example.com"))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func removingDeletesOnceThenReportsNotFound(kind: StoreKind) async throws {
        let store = try kind.makeFixture().open()
        let ada = try await store.add(NewUser(name: "Ada", email: "ada@example.com"))
        try await store.remove(id: ada.id)
        await #expect(throws: UserError.notFound(id: ada.id)) { try await store.remove(id: ada.id) }
        #expect(try await store.fetchPage(PageRequest()).totalCount == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func importIsAnUpsertThatLeavesIdenticalRowsAlone(kind: StoreKind) async throws {
        let store = try kind.makeFixture().open()
        var users = SampleUsers.generate(count: 300, seed: 3)
        #expect(try await store.importUsers(users) == 300)
        #expect(try await store.importUsers(users) == 0)
        users[0].name = "Changed By Import"
        users[1].version = 7
        #expect(try await store.importUsers(Array(users.prefix(10))) == 2)
        #expect(try await store.fetchUser(id: users[0].id).name == "Changed By Import")
        #expect(try await store.fetchUser(id: users[1].id).version == 7)
        #expect(try await store.fetchPage(PageRequest(limit: 1)).totalCount == 300)
    }

    /// An import never lowers a version: a changed user goes past the stored version, whatever
    /// version the entry names (issue 29: PostgreSQL used to store the entry's version as given).
    @Test(arguments: StoreKind.allCases)
    func anImportNeverLowersAVersion(kind: StoreKind) async throws {
        let store = try kind.makeFixture().open()
        var users = SampleUsers.generate(count: 3, seed: 4)
        _ = try await store.importUsers(users)
        var saved = users[0]
        for name in ["Renamed Once", "Renamed Twice"] {
            saved.name = name
            saved = try await store.update(saved)
        }
        #expect(saved.version == 3)
        users[0].name = "Changed By An Old File"
        #expect(try await store.importUsers(users) == 1)
        #expect(try await store.fetchUser(id: users[0].id).version == 4)
        #expect(try await store.importUsers(users) == 0)
        #expect(try await store.fetchUser(id: users[0].id).version == 4)
    }

    @Test(arguments: StoreKind.allCases)
    func twoWritersOnOneUserGiveOneSuccessAndOneConflict(kind: StoreKind) async throws {
        let fixture = try kind.makeFixture()
        let first = try fixture.open()
        let second = try fixture.open()
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
}
