import CSQLite
import Foundation
import Testing
@testable import UserListData
import UserListDomain

/// After a bulk load the search index catches up in the background. Whatever point it has
/// reached, a search answers exactly as the whole index would; writes made meanwhile are
/// indexed once, by whichever of the triggers or the catch-up owns the row; and a catch-up cut
/// short is finished by the next process that opens the store.
@Suite struct SearchBacklogTests {
    static func mark(_ path: String) throws -> Int? {
        let connection = try SQLiteConnection(path: path, mode: .readOnly, busyTimeoutMilliseconds: 5_000)
        return try SQLiteSearchIndex.indexedThrough(connection, "checking")
    }

    /// How many users' search entries are stale (left to the catch-up).
    static func stale(_ path: String) throws -> Int {
        let connection = try SQLiteConnection(path: path, mode: .readOnly, busyTimeoutMilliseconds: 5_000)
        return try connection.integer("SELECT COUNT(*) FROM search_stale", "checking")
    }

    /// How many users the search index itself lists for every trigram of `term`.
    static func indexed(_ path: String, _ term: String) throws -> Int {
        let connection = try SQLiteConnection(path: path, mode: .readOnly, busyTimeoutMilliseconds: 5_000)
        let query = try #require(SQLiteSearch(term)?.trigramQuery)
        let statement = try connection.statement("SELECT COUNT(*) FROM users_search WHERE users_search MATCH ?1")
        defer { statement.reset() }
        statement.bind(1, query)
        _ = try statement.step("counting")
        return statement.int(0)
    }

    /// Every term's results and counts, page by page, against the Domain's rule over `users`. A
    /// search made broad by a big backlog may leave its count out (nil), never get it wrong.
    static func expectSearchesMatch(_ store: SQLiteUserRepository, _ users: [User], terms: [String],
                                    countsMayBeLeftOut: Bool = false,
                                    sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for term in terms {
            let expected = SubstringSearchTests.ordered(users.filter { TextKey.matches(term, name: $0.name, email: $0.email) })
            let (found, totals) = try await SubstringSearchTests.all(store, term, limit: 50)
            #expect(found.map(\.id) == expected.map(\.id), "\(term)", sourceLocation: sourceLocation)
            #expect(totals.allSatisfy { $0 == expected.count || (countsMayBeLeftOut && $0 == nil) },
                    "\(term): \(totals.prefix(2)) vs \(expected.count)",
                    sourceLocation: sourceLocation)
        }
    }

    static func terms(_ users: [User]) -> [String] {
        // Narrow terms: one user's email from its middle, a surname, a name's middle, and one
        // that nobody matches. (Broad searches never read the index: SubstringSearchTests.)
        [String(TextKey.fold(users[3].email).dropFirst(2).prefix(9)),
         String(TextKey.fold(users[users.count - 7].email).dropFirst(4).prefix(8)),
         String(users[11].name.split(separator: " ").last!),
         String(TextKey.fold(users[20_000].name).dropFirst(2).prefix(5)),
         "xyzzy"]
    }

    /// A store at `path` whose search index never catches up by itself: the backlog stays
    /// until a test fills it.
    static func storeLeavingTheBacklog(_ path: String) throws -> SQLiteUserRepository {
        var options = SQLiteUserRepository.Options()
        options.catchesUpSearchIndex = false
        return try SQLiteUserRepository(path: path, options: options)
    }

    @Test func aSearchDuringTheBacklogAnswersAsTheWholeIndexWould() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("backlog.sqlite")
        let store = try Self.storeLeavingTheBacklog(path)
        var users = SampleUsers.generate(count: SQLiteUserRepository.rebuildIndexesFrom + 100, seed: 41)
        _ = try await store.importUsers(users)
        #expect(try Self.mark(path) == 0, "the bulk load left the index to the catch-up")
        // The whole store is the backlog: every search is broad.
        try await Self.expectSearchesMatch(store, users, terms: Self.terms(users), countsMayBeLeftOut: true)

        // Indexed up to 1,000 users from the end: searches read the index and those 1,000.
        let mark = users.count - 1_000
        _ = try store.writer!.performAndWait { connection throws(SQLiteError) in try SQLiteSearchIndex.catchUp(connection, rows: mark) }
        #expect(try Self.mark(path) == mark)
        // Writes on both sides of the mark (users are rowid index + 1), and a new user past it.
        let pastTheMark = users.count - 7
        for index in [3, 11, 20_000, pastTheMark] {
            users[index].name = "Renamed Quokkaberg \(index)"
            users[index] = try await store.update(users[index])
        }
        try await store.remove(id: users[users.count - 100].id)
        try await store.remove(id: users[5].id)
        users.remove(at: users.count - 100)
        users.remove(at: 5)
        users.append(try await store.add(NewUser(name: "Late Quokkaberg", email: "late@quokka.example")))
        let terms = Self.terms(users) + ["quokkaberg", "okkaber", "late@quo"]
        // Rare terms (an email's middle, "late@quo") read the index and the 1,000; a surname's
        // candidates and the 1,000 together are past the cap, so it walks the list instead.
        try await Self.expectSearchesMatch(store, users, terms: terms, countsMayBeLeftOut: true)
        // The index itself: the triggers kept the user before the mark, and left the two past it
        // (a rename, a new user) to the catch-up.
        #expect(try Self.indexed(path, "berg 3") == 1)
        #expect(try Self.indexed(path, "berg \(pastTheMark)") == 0)
        #expect(try Self.indexed(path, "late@quo") == 0)

        // Another process opens the store and finishes the catch-up.
        let next = try SQLiteUserRepository(path: path)
        await next.searchIndexCaughtUp()
        #expect(try Self.mark(path) == nil)
        try await Self.expectSearchesMatch(next, users, terms: terms)
        try await Self.expectSearchesMatch(store, users, terms: terms)
        for term in ["berg 3", "berg \(pastTheMark)", "late@quo"] { #expect(try Self.indexed(path, term) == 1, "\(term)") }

        // The index holds every user once, and FTS5 finds it sound.
        let connection = try SQLiteConnection(path: path, mode: .readWrite, busyTimeoutMilliseconds: 5_000)
        #expect(try connection.integer("SELECT COUNT(*) FROM users_search", "counting") == users.count)
        try connection.execute("INSERT INTO users_search (users_search, rank) VALUES ('integrity-check', 0)", "checking")
    }

    @Test func aBulkLoadIsSearchableAtOnceAndCaughtUpSoon() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("caught-up.sqlite")
        let store = try SQLiteUserRepository(path: path)
        let users = SampleUsers.generate(count: SQLiteUserRepository.rebuildIndexesFrom + 100, seed: 42)
        _ = try await store.importUsers(users)
        try await Self.expectSearchesMatch(store, users, terms: Self.terms(users), countsMayBeLeftOut: true)
        await store.searchIndexCaughtUp()
        #expect(try Self.mark(path) == nil)
        try await Self.expectSearchesMatch(store, users, terms: Self.terms(users))
    }
}
