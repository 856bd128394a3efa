import Foundation
import Testing
import UserListData
import UserListDomain
import ThreadLocks

/// The daemon's feed (shared pages forgotten, then the change passed on) stays direct over the
/// SQLite feed: an observer has the change, and the pages are gone, by the time the write
/// returns, with no task in between (the fan-out's one hand-off depends on it).
@Test func overTheSQLiteFeedTheChangeAndTheInvalidationComeBeforeTheWriteReturns() async throws {
    let directory = try TemporaryDirectory()
    let store = try SQLiteUserRepository(path: directory.file("users.sqlite3"))
    let users = SampleUsers.generate(count: 20, seed: 5)
    _ = try await store.importUsers(users)
    let pages = SharedPageRepository(base: store)
    let feed = PageInvalidatingFeed(base: try SQLiteChangeFeed(observing: store), pages: pages)
    let seen = Lock<[UserChange]>([])
    let observation = feed.observe { committed in seen.withLock { $0.append(committed.change) } }
    defer { observation.cancel() }

    let before = try await pages.fetchPage(PageRequest(limit: 50))
    var renamed = try #require(before.users.first)
    renamed.name = "Zz Renamed"
    // Written past the shared pages (as another session's repository would): only the feed can
    // make them forget.
    let saved = try await store.update(renamed)

    #expect(seen.withLock { $0 } == [.saved(saved)], "observed on the writer's thread before the write returned")
    let after = try await pages.fetchPage(PageRequest(limit: 50))
    #expect(after.users.contains { $0.id == saved.id && $0.name == "Zz Renamed" }, "the page cached before was forgotten")
}
