import Foundation
import Testing
@testable import UserListData
import UserListDomain
import UserListTestSupport

/// `exportUsers` on PostgreSQL streams the store with `COPY ... TO STDOUT`: every user, in list
/// order, values as stored (COPY's escapes undone), the same as walking the keyset pages.
@Suite(.serialized, .childProcesses, .enabled(if: PostgresTestServer.isAvailable,
                "PostgreSQL 15 is missing (/usr/lib/postgresql/15/bin, or no 'postgres' user to run it as root): run scripts/setup.sh"))
struct PostgresExportProcessTests {
    @Test func anExportIsEveryUserInListOrderAsStored() async throws {
        let server = try PostgresTestServer.shared()
        let store = try PostgresUserRepository(connection: try PGConnectionString(server.conninfo(try server.makeDatabase())))
        var users = SampleUsers.generate(count: 3_000, seed: 31)
        for (index, value) in PGCopyTextTests.hostile.enumerated() { users[index].name = "Z" + value }
        users[0].avatarURL = nil
        users[1].avatarURL = "https://example.org/a\tb\\c.png"
        _ = try await store.importUsers(users)
        var paged: [User] = []
        var request = PageRequest(limit: 700)
        while true {
            let page = try await store.fetchPage(request)
            paged += page.users
            guard let next = page.next else { break }
            request.after = next
        }
        let exported = try await store.exportUsers()
        #expect(exported.count == 3_000)
        #expect(exported == paged)
        #expect(Set(exported.map(\.id)) == Set(users.map(\.id)))
        let byID = Dictionary(uniqueKeysWithValues: exported.map { ($0.id, $0) })
        for user in users.prefix(20) { #expect(byID[user.id] == user) }
    }
}
