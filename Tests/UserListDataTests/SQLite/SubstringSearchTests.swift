import Foundation
import Testing
@testable import UserListData
import UserListDomain

/// Search finds a term anywhere in the name or the email (not only at the start), ignoring case,
/// accents, width and the Unicode form, through the trigram index or the ordered walk, and in
/// list order either way.
@Suite struct SubstringSearchTests {
    private static func user(_ name: String, _ email: String) -> User {
        User(id: UUID(), name: name, email: email)
    }

    static func ordered(_ users: [User]) -> [User] {
        users.sorted { a, b in
            let ka = Array(TextKey.fold(a.name).utf8), kb = Array(TextKey.fold(b.name).utf8)
            if ka != kb { return ka.lexicographicallyPrecedes(kb) }
            return a.id.uuidString < b.id.uuidString
        }
    }

    static func all(_ store: SQLiteUserRepository, _ search: String, limit: Int = 7) async throws -> (users: [User], totals: [Int?]) {
        var request = PageRequest(limit: limit, search: search)
        var users: [User] = []
        var totals: [Int?] = []
        while true {
            let page = try await store.fetchPage(request)
            users += page.users
            totals.append(page.totalCount)
            guard let next = page.next else { return (users, totals) }
            request.after = next
        }
    }

    @Test func aTermInTheMiddleOfANameOrEmailIsFound() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("search.sqlite"))
        let ada = Self.user("Ada Lovelace", "ada@example.com")
        let augusta = Self.user("Augusta Ada King", "countess@lovelace.org")
        let alan = Self.user("Alan Turing", "alan@bletchley.uk")
        _ = try await store.importUsers([ada, augusta, alan])

        #expect(try await Self.all(store, "lovelace").users == Self.ordered([ada, augusta]))
        #expect(try await Self.all(store, "LOVE").users == Self.ordered([ada, augusta]))
        #expect(try await Self.all(store, "velac").users == Self.ordered([ada, augusta]))
        #expect(try await Self.all(store, "uring").users == [alan])
        #expect(try await Self.all(store, "tchley.u").users == [alan])
        // Short terms (no trigram) walk the list: still substrings.
        #expect(try await Self.all(store, "ri").users == [alan])
        #expect(try await Self.all(store, "g").users == Self.ordered([augusta, alan]))
        #expect(try await Self.all(store, "nothing").users.isEmpty)
        #expect(try await Self.all(store, "lovelace").totals == [2])
    }

    @Test func accentsCaseWidthAndUnicodeFormsAreOneKey() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("search.sqlite"))
        let precomposed = Self.user("Zo\u{EB} Ren\u{E9}e", "zoe@example.com")           // ë, é as one scalar each
        let decomposed = Self.user("Andr\u{65}\u{301} Bren\u{65}\u{301}e", "andre@example.com") // e + combining acute
        let wide = Self.user("ＲＥＮＥＥ Ｗｉｄｅ", "wide@example.com")                     // full-width letters
        let other = Self.user("Bob Stone", "bob@example.com")
        _ = try await store.importUsers([precomposed, decomposed, wide, other])

        for term in ["renee", "REN\u{C9}E", "ren\u{65}\u{301}e", "Ｒｅｎｅｅ", "enée"] {
            #expect(try await Self.all(store, term).users == Self.ordered([precomposed, decomposed, wide]),
                    "term \(term.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        #expect(try await Self.all(store, "\u{E9}e").users == Self.ordered([precomposed, decomposed, wide]))
        #expect(try await Self.all(store, "drÉ B").users == [decomposed])
    }

    @Test func cjkTermsAreFoundInsideNames() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("search.sqlite"))
        let yamada = Self.user("山田太郎", "yamada@example.jp")
        let tanaka = Self.user("田中太郎", "tanaka@example.jp")
        let kim = Self.user("김민준", "kim@example.kr")
        _ = try await store.importUsers([yamada, tanaka, kim])

        #expect(try await Self.all(store, "太郎").users == Self.ordered([yamada, tanaka]))
        #expect(try await Self.all(store, "田太郎").users == [yamada])
        #expect(try await Self.all(store, "田").users == Self.ordered([yamada, tanaka]))
        #expect(try await Self.all(store, "민준").users == [kim])
        #expect(try await Self.all(store, "example.jp").users == Self.ordered([yamada, tanaka]))
    }

    /// Many candidates (over `candidateCap`) take the ordered walk, few take the index: both give
    /// every match once, in list order, as the ViewModel's matcher would pick them.
    @Test(arguments: ["son", "ana", "ez", "a", "smith", "ö", "xyzzy"])
    func broadAndNarrowSearchesWalkEveryMatchInListOrder(term: String) async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("search.sqlite"))
        let users = SampleUsers.generate(count: 6_000, seed: 3)
        _ = try await store.importUsers(users)
        let expected = Self.ordered(users.filter { TextKey.matches(term, name: $0.name, email: $0.email) })
        let (found, totals) = try await Self.all(store, term, limit: 97)
        #expect(found == expected)
        #expect(totals.allSatisfy { $0 == expected.count }, "\(totals.prefix(3)) vs \(expected.count)")
    }

    @Test func theIndexFollowsRenamesRemovalsAndBulkLoads() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("search.sqlite"))
        // A bulk load into an empty table rebuilds the index in one pass.
        let many = SampleUsers.generate(count: SQLiteUserRepository.rebuildIndexesFrom + 10, seed: 5)
        _ = try await store.importUsers(many)
        var ada = try await store.add(NewUser(name: "Ada Lovelace", email: "ada@example.com"))
        #expect(try await Self.all(store, "ovelac").users.map(\.id).contains(ada.id))

        ada.name = "Ada Byron"
        ada = try await store.update(ada)
        #expect(!(try await Self.all(store, "ovelac").users.map(\.id).contains(ada.id)))
        #expect(try await Self.all(store, "da byro").users.map(\.id) == [ada.id])

        try await store.remove(id: ada.id)
        #expect(try await Self.all(store, "da byro").users.isEmpty)

        let someone = many[1_234]
        let middle = String(TextKey.fold(someone.email).dropFirst(2).prefix(8))
        #expect(try await Self.all(store, middle).users.map(\.id).contains(someone.id))
    }

    @Test func theListMatcherIsTheStoresRule() {
        #expect(TextKey.matches("love", name: "Ada Lovelace", email: "a@b.c"))
        #expect(TextKey.matches("B.C", name: "Ada", email: "a@b.c"))
        #expect(TextKey.matches("ené", name: "Ren\u{65}\u{301}e", email: "r@x.y"))
        #expect(TextKey.matches("", name: "Anyone", email: "a@b.c"))
        #expect(!TextKey.matches("lovelace", name: "Ada Byron", email: "ada@byron.org"))
    }

    @Test func anImportThatChangesAUserBumpsItsVersionAndAnIdenticalOneDoesNot() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("search.sqlite"))
        var ada = User(id: UUID(), name: "Ada Lovelace", email: "ada@example.com", version: 1)
        #expect(try await store.importUsers([ada]) == 1)
        #expect(try await store.importUsers([ada]) == 0)
        #expect(try await store.fetchUser(id: ada.id).version == 1)
        ada.name = "Ada King"
        #expect(try await store.importUsers([ada]) == 1)
        let stored = try await store.fetchUser(id: ada.id)
        #expect(stored.version == 2 && stored.name == "Ada King")
        #expect(try await Self.all(store, "da kin").users.map(\.id) == [ada.id])
    }

    /// An import keeps the search index and the change log itself, with the triggers dropped
    /// inside its transaction: the old keys of a user it renames must leave the index, the new
    /// ones enter it, and the triggers must be back for the next ordinary write.
    @Test func anImportThatRenamesUsersMovesThemInTheIndexAndLeavesTheTriggersInPlace() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("search.sqlite"))
        var grace = User(id: UUID(), name: "Grace Hopper", email: "grace@navy.mil", version: 1)
        let edsger = User(id: UUID(), name: "Edsger Dijkstra", email: "ewd@utexas.edu", version: 1)
        #expect(try await store.importUsers([grace, edsger]) == 2)
        grace.name = "Amazing Grace"
        grace.email = "amazing@cobol.org"
        #expect(try await store.importUsers([grace, edsger]) == 1)
        #expect(try await Self.all(store, "hopper").users.isEmpty)
        #expect(try await Self.all(store, "navy").users.isEmpty)
        #expect(try await Self.all(store, "azing gr").users.map(\.id) == [grace.id])
        #expect(try await Self.all(store, "cobol").users.map(\.id) == [grace.id])
        #expect(try await Self.all(store, "dijkstra").users.map(\.id) == [edsger.id])

        // An ordinary save after the import goes through the triggers again: indexed and logged.
        let feed = try SQLiteChangeFeed(path: store.path)
        let changes = ChangeCollector(feed)
        var renamed = try await store.fetchUser(id: edsger.id)
        renamed.name = "Edsger Wybe Dijkstra"
        _ = try await store.update(renamed)
        #expect(try await Self.all(store, "wybe").users.map(\.id) == [edsger.id])
        #expect(await changes.wait(for: 1).map(\.userID) == [edsger.id])
    }
}
