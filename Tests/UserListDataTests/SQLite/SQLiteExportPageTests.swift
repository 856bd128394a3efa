import Foundation
import Testing
@testable import UserListData
import UserListDomain

/// `exportPage` on SQLite (`export_page`'s read): the screens' keyset pages, ended at the byte
/// budget as well as the limit. Walking them gives the users of the screens' pages, in the same
/// order, with the same totals, whatever the limit, budget or search; and the shared page cache
/// passes them through.
@Suite struct SQLiteExportPageTests {
    static func store(_ users: [User], _ directory: TemporaryDirectory) async throws -> SQLiteUserRepository {
        let store = try SQLiteUserRepository(path: directory.file("export.sqlite"))
        _ = try await store.importUsers(users)
        return store
    }

    /// Sample users, and some whose long fields make a page of 40,000 bytes hold a few only.
    static func users() -> [User] {
        var users = SampleUsers.generate(count: 3_000, seed: 29)
        for index in stride(from: 0, to: 3_000, by: 97) {
            users[index].avatarURL = "https://avatars.example.com/" + String(repeating: "a", count: 2_000)
        }
        users[1].name = "tab\tand \"quotes\" \\ 中文 🧪"
        users[2].avatarURL = nil
        return users
    }

    static func walk(_ store: any UserRepository, limit: Int, byteBudget: Int,
                     search: String? = nil) async throws -> (users: [User], pages: [UserPage]) {
        var pages: [UserPage] = []
        var request = PageRequest(limit: limit, search: search)
        while true {
            let page = try await store.exportPage(request, byteBudget: byteBudget)
            pages.append(page)
            guard let next = page.next else { break }
            #expect(!page.users.isEmpty, "a page with a next has users")
            request.after = next
        }
        return (pages.flatMap(\.users), pages)
    }

    static func screenWalk(_ store: SQLiteUserRepository, search: String? = nil) async throws -> (users: [User], total: Int?) {
        var users: [User] = []
        var request = PageRequest(limit: 700, search: search)
        var total: Int?
        while true {
            let page = try await store.fetchPage(request)
            if request.after == nil { total = page.totalCount }
            users += page.users
            guard let next = page.next else { return (users, total) }
            request.after = next
        }
    }

    @Test func everyUserOnceInListOrderAndEachPageEndsAtItsBudget() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Self.store(Self.users(), directory)
        let expected = try await Self.screenWalk(store)
        #expect(expected.users.count == 3_000)

        // As userctl asks (10,000 a page, a megabyte), by the count alone, cut by bytes, one a page.
        for (limit, budget) in [(10_000, 1 << 20), (700, 1 << 20), (10_000, 40_000), (1, 1 << 20), (10_000, 0)] {
            let walked = try await Self.walk(store, limit: limit, byteBudget: budget)
            #expect(walked.users == expected.users, "limit \(limit), budget \(budget): \(walked.users.count) users")
            #expect(walked.pages.allSatisfy { $0.users.count <= limit && $0.totalCount == 3_000 })
            let bytes = expected.users.map(UserExportSize.lowerBound).reduce(0, +)
            #expect(walked.pages.count >= min(3_000, bytes / max(1, budget)), "\(walked.pages.count) pages")
            // A page short of the limit ends before the first user that does not fit the budget.
            for (page, following) in zip(walked.pages, walked.pages.dropFirst()) where page.users.count < limit {
                let bytes = page.users.map(UserExportSize.lowerBound).reduce(0, +)
                #expect(page.users.count == 1 || bytes <= budget, "\(bytes) bytes in \(page.users.count) users")
                #expect(bytes + UserExportSize.lowerBound(following.users[0]) > budget)
            }
        }
    }

    /// Narrow (trigram index) and broad (ordered walk) searches, cut by bytes: the same matches
    /// and the same count as the screens' pages.
    @Test(arguments: ["lovelace", "son", "a", "中文", "no such user"])
    func searchesCutByBytesFindWhatTheScreensFind(term: String) async throws {
        let directory = try TemporaryDirectory()
        let store = try await Self.store(Self.users(), directory)
        let expected = try await Self.screenWalk(store, search: term)
        for (limit, budget) in [(10_000, 20_000), (50, 1 << 20)] {
            let walked = try await Self.walk(store, limit: limit, byteBudget: budget, search: term)
            #expect(walked.users == expected.users, "\(term): \(walked.users.count) of \(expected.users.count)")
            #expect(walked.pages.allSatisfy { $0.totalCount == expected.total }, "\(term): \(walked.pages.map(\.totalCount))")
        }
    }

    /// The shared page cache gives SQLite's export pages through (cut by bytes), and keeps none.
    @Test func theSharedPageCachePassesExportPagesThrough() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Self.store(Self.users(), directory)
        let shared = SharedPageRepository(base: store)
        #expect(shared.readsExportPages)
        let first = try await shared.exportPage(PageRequest(limit: 10_000), byteBudget: 40_000)
        #expect(first.users.count < 3_000 && first.next != nil, "cut by bytes: \(first.users.count) users")
        // Written past the cache (another process): a kept page would not show it.
        let renamed = User(id: first.users[0].id, name: "Aaaa First", email: first.users[0].email,
                           avatarURL: first.users[0].avatarURL, version: first.users[0].version)
        let other = try SQLiteUserRepository(path: directory.file("export.sqlite"))
        _ = try await other.update(renamed)
        #expect(try await shared.exportPage(PageRequest(limit: 10_000), byteBudget: 40_000).users[0].name == "Aaaa First")
    }

    /// A page's query as `readPage` writes it (unfiltered, after a cursor).
    static let pageQuery = "SELECT \(SQLiteUserRepository.columns), name_key FROM users WHERE (name_key, id) > ('m', '') "
        + "ORDER BY name_key, id LIMIT 10001"

    /// A page in list order is read from the name index alone (schema v9), not by a lookup in
    /// the table a user.
    @Test func pagesReadTheNameIndexAlone() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Self.store(Array(Self.users().prefix(10)), directory)
        let plan = try store.queryPlan(Self.pageQuery)
        #expect(plan.joined().contains("COVERING INDEX users_by_name_key"), "\(plan)")
        #expect(!plan.joined().contains("TEMP B-TREE"), "\(plan)")
    }
}
