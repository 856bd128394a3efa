import Foundation
import Testing
@testable import UserListData
import UserListDomain
import ThreadLocks
import UserListTestSupport

/// Observes a feed, keeping what it delivers, so a test can wait for N changes, then check that
/// no more arrive.
final class ChangeCollector: Sendable {
    private let received = Lock<[CommittedChange]>([])
    private let observation = Lock<ChangeObservation?>(nil)
    /// Beats after every change delivered.
    private let arrived = Pulse()

    init(_ feed: any UserChangeFeed) {
        let received = self.received
        let arrived = self.arrived
        observation.withLock {
            $0 = feed.observe { committed in
                received.withLock { $0.append(committed) }
                arrived.beat()
            }
        }
    }

    var changes: [UserChange] { received.withLock { $0.map(\.change) } }
    /// The positions delivered with them.
    var seqs: [Int] { received.withLock { $0.map(\.seq) } }

    /// Waits until at least `count` changes arrived (or `timeout`), then `settle` more to catch
    /// duplicates, and returns everything received.
    func wait(for count: Int, timeout: Duration = .seconds(60), settle: Duration = .milliseconds(150)) async -> [UserChange] {
        await arrived.until(timeout: timeout) { changes.count >= count }
        // Not an outcome-deciding sleep: after the awaited changes, a moment for duplicates to
        // show (a slow machine can only hide a duplicate, never fail a correct feed).
        try? await Task.sleep(for: settle)
        return changes
    }
}

@Suite(.serialized, .childProcesses) struct SQLiteChangeFeedTests {
    @Test func writesInThisProcessArriveOnceInCommitOrder() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("users.sqlite"))
        let feed = try SQLiteChangeFeed(observing: store, safetyInterval: .seconds(600))  // the writer's hand-over alone
        let collector = ChangeCollector(feed)

        let ada = try await store.add(NewUser(name: "Ada", email: "ada@example.com"))
        var edited = ada
        edited.name = "Ada King"
        let saved = try await store.update(edited)
        try await store.remove(id: ada.id)

        #expect(await collector.wait(for: 3) == [.added(ada), .saved(saved), .removed(id: ada.id)])
        #expect(collector.seqs == collector.seqs.first.map { Array($0..<$0 + 3) }, "each with its position, in order")
    }

    @Test func writesByAnotherConnectionArriveOnceInCommitOrder() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("users.sqlite")
        let store = try SQLiteUserRepository(path: path)
        let feed = try SQLiteChangeFeed(observing: store, safetyInterval: .seconds(600))
        let first = ChangeCollector(feed)
        let second = ChangeCollector(feed)

        // Another writer on the same file that the feed was not told about: only the watcher finds it.
        let other = try SQLiteUserRepository(path: path)
        var expected: [UserChange] = []
        for i in 0..<30 {
            let user = try await other.add(NewUser(name: "Person \(i)", email: "p\(i)@example.com"))
            expected.append(.added(user))
            if i.isMultiple(of: 3) {
                var edited = user
                edited.name = "Edited \(i)"
                expected.append(.saved(try await (i.isMultiple(of: 2) ? store : other).update(edited)))
            }
        }
        #expect(await first.wait(for: expected.count) == expected)
        #expect(await second.wait(for: expected.count) == expected)
    }

    /// The watcher stands aside while the observed store holds the write lock; another writer
    /// committing between and right after those writes must still be found (by inotify: the
    /// safety-net check never runs here), once each and in commit order.
    @Test func anotherWriterBetweenThisStoresWritesIsStillFound() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("users.sqlite")
        let store = try SQLiteUserRepository(path: path)
        let feed = try SQLiteChangeFeed(observing: store, safetyInterval: .seconds(600))
        let collector = ChangeCollector(feed)
        let other = try SQLiteUserRepository(path: path)

        let perWriter = 150
        async let ours: Void = {
            for i in 0..<perWriter { _ = try await store.add(NewUser(name: "Ours \(i)", email: "ours\(i)@example.com")) }
        }()
        async let theirs: Void = {
            for i in 0..<perWriter { _ = try await other.add(NewUser(name: "Theirs \(i)", email: "theirs\(i)@example.com")) }
        }()
        try await ours
        try await theirs

        let delivered = await collector.wait(for: 2 * perWriter).map { change -> String in
            guard case .added(let user) = change else { return "not an addition: \(change)" }
            return user.name
        }
        // Commit order, as the change log holds it.
        let logged = try SQLiteConnection(path: path, mode: .readOnly, busyTimeoutMilliseconds: 5_000)
        let statement = try logged.statement("SELECT name FROM changes ORDER BY seq")
        var order: [String] = []
        while try statement.step("reading the log") { order.append(statement.text(0)) }
        statement.reset()
        #expect(order.count == 2 * perWriter)
        #expect(delivered == order)
    }

    @Test func aSubscriberSeesOnlyChangesCommittedAfterItSubscribed() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("users.sqlite"))
        let feed = try SQLiteChangeFeed(observing: store)
        let early = ChangeCollector(feed)
        let a = try await store.add(NewUser(name: "A", email: "a@example.com"))
        _ = await early.wait(for: 1, settle: .zero)
        let late = ChangeCollector(feed)
        let b = try await store.add(NewUser(name: "B", email: "b@example.com"))
        #expect(await early.wait(for: 2) == [.added(a), .added(b)])
        #expect(await late.wait(for: 1) == [.added(b)])
    }

    /// A feed that fell behind a pruning writer cannot deliver what was pruned: it says
    /// `.resync` in its place, then goes on.
    @Test func aFeedBehindThePrunedLogSaysResyncThenCarriesOn() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("users.sqlite")
        let store = try SQLiteUserRepository(path: path)
        let feed = try SQLiteChangeFeed(path: path, safetyInterval: .seconds(600))
        let collector = ChangeCollector(feed)
        // Two changes committed together, the first pruned before the feed could read it.
        let writer = try SQLiteConnection(path: path, mode: .readWrite, busyTimeoutMilliseconds: 5_000)
        try writer.execute("""
            BEGIN;
            INSERT INTO changes (kind, user_id, at) VALUES ('removed', '\(UUID().uuidString)', 0);
            DELETE FROM changes WHERE seq = (SELECT MAX(seq) FROM changes);
            COMMIT;
            """, "pruning behind the feed")
        let ada = try await store.add(NewUser(name: "Ada", email: "ada@example.com"))
        #expect(await collector.wait(for: 2) == [.resync, .added(ada)])
    }

    @Test func importsAnnounceEachChangedUserAndIdenticalReimportsNothing() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("users.sqlite"))
        let feed = try SQLiteChangeFeed(observing: store)
        let collector = ChangeCollector(feed)
        let users = SampleUsers.generate(count: 2_500, seed: 21)
        _ = try await store.importUsers(users)
        _ = try await store.importUsers(users)
        var changed = users[7]
        changed.email = "changed@example.com"
        _ = try await store.importUsers([changed])
        let changes = await collector.wait(for: 2_501, settle: .milliseconds(300))
        #expect(changes.count == 2_501)
        #expect(Array(changes.prefix(2_500)) == users.map(UserChange.added))
        changed.version = 2  // an import that changes a user bumps its version, like any save
        #expect(changes.last == .saved(changed))
    }

    /// A real second process: python3's own sqlite3 module writes the file with plain SQL, and
    /// the triggers in the file (not our code) log the change.
    @Test func writesByAnotherProcessArrive() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("users.sqlite")
        let store = try SQLiteUserRepository(path: path)
        let ada = try await store.add(NewUser(name: "Ada", email: "ada@example.com"))
        // No safety-net check in the test's lifetime: inotify alone must find the other process.
        let feed = try SQLiteChangeFeed(path: path, safetyInterval: .seconds(600))
        #expect(feed.watchesFile)
        let collector = ChangeCollector(feed)

        let newID = UUID()
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=5)
            db.execute("BEGIN IMMEDIATE")
            db.execute("UPDATE users SET name = 'Ada Byron', name_key = 'ada byron', version = version + 1 WHERE id = ?", (sys.argv[2],))
            db.execute("INSERT INTO users (id, name, email, avatar_url, version, name_key, email_key) VALUES (?, 'Bo', 'bo@example.com', NULL, 1, 'bo', 'bo@example.com')", (sys.argv[3],))
            db.execute("COMMIT")
            db.execute("DELETE FROM users WHERE id = ?", (sys.argv[3],))
            """
        #expect(run("/usr/bin/env", ["python3", "-c", script, path, ada.id.uuidString, newID.uuidString]) == 0)
        var byron = ada
        byron.name = "Ada Byron"
        byron.version = 2
        #expect(await collector.wait(for: 3) == [
            .saved(byron),
            .added(User(id: newID, name: "Bo", email: "bo@example.com", version: 1)),
            .removed(id: newID),
        ])
        #expect(try await store.fetchPage(PageRequest()).totalCount == 1)
    }
}
