import Foundation
import Testing
import UserListData
import UserListDomain

@Suite struct CachedUserRepositoryTests {
    let users = SampleUsers.generate(count: 120, seed: 23)

    @Test func pagesAreCachedAndServedStaleWhenUpstreamIsUnreachable() async throws {
        let server = try HTTPFixture(users: users)
        let directory = try TemporaryDirectory()
        let cache = try SQLiteUserRepository(path: directory.file("cache.sqlite"))
        let cached = CachedUserRepository(upstream: RemoteUserRepository(baseURL: server.baseURL), cache: cache)

        let first = try await cached.fetchPage(PageRequest(limit: 50))
        let second = try await cached.fetchPage(PageRequest(after: first.next, limit: 50))
        #expect(!first.isStale && !second.isStale)
        #expect(first.users + second.users == Array(listOrder(users).prefix(100)))
        #expect(try await cache.fetchPage(PageRequest(limit: 500)).users == Array(listOrder(users).prefix(100)))

        server.stop()
        let staleFirst = try await cached.fetchPage(PageRequest(limit: 50))
        #expect(staleFirst.isStale)
        #expect(staleFirst.users == first.users)
        // A listing that was half-way continues from the cache where it was.
        let staleSecond = try await cached.fetchPage(PageRequest(after: first.next, limit: 50))
        #expect(staleSecond.isStale)
        #expect(staleSecond.users == second.users)
        // The third page was never fetched: the cache knows nothing after the second.
        let staleThird = try await cached.fetchPage(PageRequest(after: second.next, limit: 50))
        #expect(staleThird.isStale && staleThird.users.isEmpty && staleThird.next == nil)

        #expect(try await cached.fetchUser(id: first.users[3].id) == first.users[3])
        let neverSeen = listOrder(users)[110]
        let reason = await unavailableReason { _ = try await cached.fetchUser(id: neverSeen.id) }
        #expect(reason.contains("cannot reach the upstream"), "\(reason)")
    }

    /// The last page comes from upstream and lands in the cache, which serves it (stale) once
    /// upstream is gone.
    @Test func theLastPageIsCachedAndServedStaleWhenUpstreamIsUnreachable() async throws {
        let server = try HTTPFixture(users: users)
        let directory = try TemporaryDirectory()
        let cache = try SQLiteUserRepository(path: directory.file("cache.sqlite"))
        let cached = CachedUserRepository(upstream: RemoteUserRepository(baseURL: server.baseURL), cache: cache)

        let last = try await cached.fetchPage(BackwardPageRequest(limit: 50))
        #expect(!last.isStale && last.hasPrevious)
        #expect(last.users == Array(listOrder(users).suffix(20)))  // page 3 of 50, 50, 20
        let before = try await cached.fetchPage(BackwardPageRequest(before: last.previous, limit: 50))
        #expect(before.users == Array(listOrder(users)[50..<100]))

        server.stop()
        let staleLast = try await cached.fetchPage(BackwardPageRequest(limit: 50))
        #expect(staleLast.isStale)
        #expect(staleLast.users == Array(listOrder(users)[70..<120]))  // the cache's own last 50
        // Half-way up, the listing continues from the cache before the page it was on.
        let staleBefore = try await cached.fetchPage(BackwardPageRequest(before: last.previous, limit: 50))
        #expect(staleBefore.isStale && staleBefore.users == Array(listOrder(users)[50..<100]) && !staleBefore.hasPrevious)
    }

    @Test func anEmptyCacheWithUpstreamDownIsUnavailable() async throws {
        let server = try HTTPFixture(users: users)
        server.stop()
        let directory = try TemporaryDirectory()
        let cached = CachedUserRepository(upstream: RemoteUserRepository(baseURL: server.baseURL),
                                          cache: try SQLiteUserRepository(path: directory.file("cache.sqlite")))
        let reason = await unavailableReason { _ = try await cached.fetchPage(PageRequest()) }
        #expect(reason.contains("cannot reach the upstream"), "\(reason)")
    }

    @Test func writesGoUpstreamFirstThenIntoTheCache() async throws {
        let server = try HTTPFixture(users: users)
        let directory = try TemporaryDirectory()
        let cache = try SQLiteUserRepository(path: directory.file("cache.sqlite"))
        let remote = RemoteUserRepository(baseURL: server.baseURL)
        let cached = CachedUserRepository(upstream: remote, cache: cache)

        var edited = try await cached.fetchUser(id: users[0].id)
        edited.name = "Written Through"
        let saved = try await cached.update(edited)
        #expect(try await remote.fetchUser(id: saved.id) == saved)
        #expect(try await cache.fetchUser(id: saved.id) == saved)

        // A conflict teaches the cache what upstream stores.
        var other = saved
        other.name = "Someone Else"
        let theirs = try await remote.update(other)
        await #expect(throws: UserError.conflict(stored: theirs)) { _ = try await cached.update(saved) }
        #expect(try await cache.fetchUser(id: saved.id) == theirs)

        let added = try await cached.add(NewUser(name: "Added Person", email: "added@example.com"))
        #expect(try await cache.fetchUser(id: added.id) == added)
        try await cached.remove(id: added.id)
        await #expect(throws: UserError.notFound(id: added.id)) { _ = try await cache.fetchUser(id: added.id) }

        // Upstream down: the write fails and the cache is left as it was.
        server.stop()
        var failing = theirs
        failing.name = "Never Saved"
        let reason = await unavailableReason { _ = try await cached.update(failing) }
        #expect(reason.contains("cannot reach the upstream"))
        #expect(try await cache.fetchUser(id: theirs.id) == theirs)
    }
}
