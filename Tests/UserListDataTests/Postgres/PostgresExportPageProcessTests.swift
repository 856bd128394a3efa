import Foundation
import Synchronization
import Testing
@testable import UserListData
import UserListDomain
import UserListTestSupport

/// `exportPage` on PostgreSQL (`export_page`'s read: one `COPY (SELECT ...) TO STDOUT` a page,
/// values inlined with `PQescapeLiteral`) walks the same users in the same order as the keyset
/// pages a screen reads: every user once, values as stored (COPY's escapes undone), whatever
/// the page size, byte budget, search or row-count hint, and whatever the cursor's name holds.
@Suite(.serialized, .childProcesses, .enabled(if: PostgresTestServer.isAvailable,
                "PostgreSQL 15 is missing (/usr/lib/postgresql/15/bin, or no 'postgres' user to run it as root): run scripts/setup.sh"))
struct PostgresExportPageProcessTests {
    static func store(_ users: [User]) async throws -> PostgresUserRepository {
        let server = try PostgresTestServer.shared()
        let store = try PostgresUserRepository(connection: try PGConnectionString(server.conninfo(try server.makeDatabase())))
        _ = try await store.importUsers(users)
        return store
    }

    /// Names that COPY escapes or SQL quoting must survive, as the whole name or a part of it.
    static let hostileNames = PGCopyTextTests.hostile + ["it's", "O'Brien\\", "'); DROP TABLE users; --", "tab\tand\nnewline",
                                                          "Ünïcødé 中文 🧪", "100% _wild_ \\%", "\\x41\\101"]

    static func walk(_ store: PostgresUserRepository, limit: Int, byteBudget: Int,
                     search: String? = nil) async throws -> (users: [User], pages: [[User]]) {
        var pages: [[User]] = []
        var request = PageRequest(limit: limit, search: search)
        while true {
            let page = try await store.exportPage(request, byteBudget: byteBudget)
            pages.append(page.users)
            guard let next = page.next else { break }
            #expect(!page.users.isEmpty, "a page with a next has users")
            request.after = next
        }
        return (pages.flatMap { $0 }, pages)
    }

    static func screenWalk(_ store: PostgresUserRepository, search: String? = nil) async throws -> [User] {
        var users: [User] = []
        var request = PageRequest(limit: 700, search: search)
        while true {
            let page = try await store.fetchPage(request)
            users += page.users
            guard let next = page.next else { return users }
            request.after = next
        }
    }

    @Test func everyUserOnceInListOrderAsStoredAcrossPages() async throws {
        var users = SampleUsers.generate(count: 3_000, seed: 29)
        for (index, name) in Self.hostileNames.enumerated() { users[index].name = "Z" + name }
        users[0].avatarURL = nil
        users[1].avatarURL = "https://example.org/a\tb\\c\nd.png"
        let store = try await Self.store(users)
        let expected = try await Self.screenWalk(store)
        #expect(expected.count == 3_000)

        // As userctl asks (10,000 a page, a megabyte), by the count alone, and cut by bytes.
        for (limit, budget) in [(10_000, 1 << 20), (700, 1 << 20), (10_000, 40_000), (1, 1 << 20)] {
            let walked = try await Self.walk(store, limit: limit, byteBudget: budget)
            #expect(walked.users == expected, "limit \(limit), budget \(budget): \(walked.users.count) users")
            #expect(walked.pages.allSatisfy { $0.count <= limit })
            // A page short of the limit ends before the first user that does not fit the budget.
            for (page, following) in zip(walked.pages, walked.pages.dropFirst()) where page.count < limit {
                let bytes = page.map(UserExportSize.lowerBound).reduce(0, +)
                #expect(page.count == 1 || bytes <= budget, "\(bytes) bytes in \(page.count) users")
                #expect(bytes + UserExportSize.lowerBound(following[0]) > budget)
            }
        }
        let byID = Dictionary(uniqueKeysWithValues: expected.map { ($0.id, $0) })
        for user in users.prefix(Self.hostileNames.count + 2) { #expect(byID[user.id] == user, "\(user.name.debugDescription)") }
        #expect(try await store.exportUsers() == expected)
    }

    /// The row-count hint only says how many rows a COPY asks for: far too high (a page read in
    /// many short COPYs) or far too low, the pages are the same.
    @Test func theRowHintChangesNothingButTheReads() async throws {
        let store = try await Self.store(SampleUsers.generate(count: 1_500, seed: 30))
        let expected = try await Self.screenWalk(store)
        for hint in [100_000, 128, 1] {
            store.exportRowBytes.store(hint, ordering: .relaxed)
            #expect(try await Self.walk(store, limit: 10_000, byteBudget: 50_000).users == expected, "hint \(hint)")
        }
    }

    /// Every user's folded name becomes a cursor (pages of one), and the search terms hold
    /// quotes, backslashes and LIKE's own characters: all inlined into COPY, none of it SQL.
    @Test func cursorsAndSearchesWithQuotesAndBackslashesAreValuesNotSQL() async throws {
        var users = SampleUsers.generate(count: Self.hostileNames.count + 10, seed: 31)
        for (index, name) in Self.hostileNames.enumerated() { users[index].name = name }
        let store = try await Self.store(users)
        #expect(try await Self.walk(store, limit: 1, byteBudget: 1 << 20).users == (try await Self.screenWalk(store)))
        for term in ["'", "it's", "\\", "O'Brien\\", "%", "_wild_", "'); DROP", "中文", "\\101"] {
            let walked = try await Self.walk(store, limit: 2, byteBudget: 1 << 20, search: term)
            let expected = try await Self.screenWalk(store, search: term)
            #expect(!expected.isEmpty, "\(term.debugDescription) matches someone")
            #expect(walked.users == expected, "search \(term.debugDescription)")
        }
        #expect(try await Self.walk(store, limit: 10, byteBudget: 1 << 20, search: "no such user").users.isEmpty)
        #expect(try await store.exportUsers().count == users.count)
    }
}
