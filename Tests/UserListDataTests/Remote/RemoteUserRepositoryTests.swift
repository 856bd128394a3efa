import Foundation
import Testing
import UserListData
import UserListDomain
import UserListTestSupport

/// Against a real HTTP server on loopback (scripts/http-fixture-server.py), one per test.
@Suite(.serialized, .childProcesses) struct RemoteUserRepositoryTests {
    let users = SampleUsers.generate(count: 120, seed: 17)

    @Test func pagesWalkEveryUserOnceInOrderWithThePageNumberAsCursor() async throws {
        let server = try HTTPFixture(users: users)
        let remote = RemoteUserRepository(baseURL: server.baseURL)
        let (walked, pages) = try await walk(remote, PageRequest(limit: 50))
        #expect(walked == listOrder(users))
        #expect(pages.map(\.next?.token) == ["2", "3", nil])
        #expect(pages.allSatisfy { $0.totalCount == 120 && !$0.isStale })

        let search = try await walk(remote, PageRequest(limit: 7, search: "zo")).users
        #expect(search == listOrder(users.filter {
            TextKey.fold($0.name).hasPrefix("zo") || TextKey.fold($0.email).hasPrefix("zo")
        }))
    }

    /// The last page is `total_pages` (two requests), and a backward cursor the page before.
    @Test func backwardPagesAreThePageNumbersCountedDown() async throws {
        let server = try HTTPFixture(users: users)
        let remote = RemoteUserRepository(baseURL: server.baseURL)
        var request = BackwardPageRequest(limit: 50)
        var walked: [User] = []
        var tokens: [String?] = []
        while true {
            let page = try await remote.fetchPage(request)
            #expect(page.totalCount == 120 && page.next == nil)
            walked = page.users + walked
            tokens.append(page.previous?.token)
            guard let previous = page.previous else { break }
            request.before = previous
        }
        #expect(walked == listOrder(users))
        #expect(tokens == ["2", "1", nil])
    }

    @Test func fetchUpdateAddRemoveSucceed() async throws {
        let server = try HTTPFixture(users: users)
        let remote = RemoteUserRepository(baseURL: server.baseURL)
        let user = try await remote.fetchUser(id: users[5].id)
        #expect(user == users[5])

        var edited = user
        edited.name = "Edited Name"
        let saved = try await remote.update(edited)
        #expect(saved.name == "Edited Name" && saved.version == user.version + 1)
        #expect(try await remote.fetchUser(id: user.id) == saved)

        let added = try await remote.add(NewUser(name: "New Person", email: "new@example.com"))
        #expect(added.version == 1)
        try await remote.remove(id: added.id)
        await #expect(throws: UserError.notFound(id: added.id)) { try await remote.remove(id: added.id) }
    }

    @Test func unknownIdIsNotFound() async throws {
        let server = try HTTPFixture(users: users)
        let remote = RemoteUserRepository(baseURL: server.baseURL)
        let ghost = UUID()
        await #expect(throws: UserError.notFound(id: ghost)) { _ = try await remote.fetchUser(id: ghost) }
        await #expect(throws: UserError.notFound(id: ghost)) {
            _ = try await remote.update(User(id: ghost, name: "G", email: "g@example.com"))
        }
    }

    @Test(arguments: ["", "bare412"])
    func aStaleSaveIsAConflictCarryingTheStoredUser(mode: String) async throws {
        let server = try HTTPFixture(users: users)
        let first = RemoteUserRepository(baseURL: server.baseURL)
        var mine = users[9]
        mine.name = "First"
        let stored = try await first.update(mine)

        let stale = RemoteUserRepository(baseURL: mode.isEmpty ? server.baseURL : server.baseURL(mode: mode))
        mine.name = "Second"
        await #expect(throws: UserError.conflict(stored: stored)) { _ = try await stale.update(mine) }
    }

    @Test func anEmptyNameIsAValidationError() async throws {
        let server = try HTTPFixture(users: users)
        let remote = RemoteUserRepository(baseURL: server.baseURL)
        var edited = users[0]
        edited.name = " "
        await #expect(throws: UserError.validation(field: .name, message: "The name cannot be empty.")) {
            _ = try await remote.update(edited)
        }
    }

    @Test func aServerErrorIsUnavailable() async throws {
        let server = try HTTPFixture(users: users)
        let remote = RemoteUserRepository(baseURL: server.baseURL(mode: "500"))
        let reason = await unavailableReason { _ = try await remote.fetchPage(PageRequest()) }
        #expect(reason.contains("500") && reason.contains("127.0.0.1:\(server.port)"), "\(reason)")
    }

    @Test func aSlowServerTimesOut() async throws {
        let server = try HTTPFixture(users: users)
        let remote = RemoteUserRepository(baseURL: server.baseURL(mode: "slow"), requestTimeout: .milliseconds(300))
        let started = ContinuousClock.now
        let reason = await unavailableReason { _ = try await remote.fetchUser(id: users[0].id) }
        #expect(reason.contains("did not answer"), "\(reason)")
        // It gave up rather than waiting for the server (which answers after 10 s): the reason
        // says so. How long it took is printed, not asserted (URLSession's timer is late under load).
        print("slow server: gave up after \(ContinuousClock.now - started)")
    }

    @Test func aMalformedBodyIsUnavailable() async throws {
        let server = try HTTPFixture(users: users)
        let remote = RemoteUserRepository(baseURL: server.baseURL(mode: "malformed"))
        let reason = await unavailableReason { _ = try await remote.fetchPage(PageRequest()) }
        #expect(reason.hasPrefix("upstream sent a malformed response"), "\(reason)")
    }

    @Test func aStoppedServerIsUnreachable() async throws {
        let server = try HTTPFixture(users: users)
        let remote = RemoteUserRepository(baseURL: server.baseURL)
        _ = try await remote.fetchPage(PageRequest())
        server.stop()
        let reason = await unavailableReason { _ = try await remote.fetchPage(PageRequest()) }
        #expect(reason.contains("cannot reach the upstream at 127.0.0.1:\(server.port)"), "\(reason)")
    }
}
