import Foundation
import Testing
@testable import UserListData
import UserListDomain
import UserListTestSupport
import ThreadLocks

/// What only the PostgreSQL store does: unique emails across users, migrations under a lock,
/// the connection string's password rule, and the change feed across connections.
@Suite(.serialized, .childProcesses, .enabled(if: PostgresTestServer.isAvailable,
                "PostgreSQL 15 is missing (/usr/lib/postgresql/15/bin, or no 'postgres' user to run it as root): run scripts/setup.sh"))
struct PostgresStoreTests {
    func freshDatabase() throws -> (server: PostgresTestServer, conninfo: PGConnectionString) {
        let server = try PostgresTestServer.shared()
        return (server, try PGConnectionString(server.conninfo(try server.makeDatabase())))
    }

    @Test func anEmailAnotherUserHasIsRefusedNamingThatUser() async throws {
        let store = try PostgresUserRepository(connection: try freshDatabase().conninfo)
        let ada = try await store.add(NewUser(name: "Ada", email: "Ada@Example.com"))
        let grace = try await store.add(NewUser(name: "Grace", email: "grace@example.com"))
        await #expect(throws: UserError.duplicateEmail(email: "ada@EXAMPLE.com", other: ada)) {
            _ = try await store.add(NewUser(name: "Other Ada", email: "ada@EXAMPLE.com"))
        }
        var taking = grace
        taking.email = "ADA@example.com"
        await #expect(throws: UserError.duplicateEmail(email: "ADA@example.com", other: ada)) {
            _ = try await store.update(taking)
        }
        // Nothing was written by the refused saves.
        #expect(try await store.fetchUser(id: grace.id) == grace)
        #expect(try await store.fetchPage(PageRequest()).totalCount == 2)
    }

    @Test func twoStoresOpeningAFreshDatabaseTogetherMigrateItOnce() async throws {
        let (server, connection) = try freshDatabase()
        async let first = Task.detached { try PostgresUserRepository(connection: connection) }.value
        async let second = Task.detached { try PostgresUserRepository(connection: connection) }.value
        let stores = try await [first, second]
        _ = try await stores[0].add(NewUser(name: "Ada", email: "ada@example.com"))
        #expect(try await stores[1].fetchPage(PageRequest()).users.map(\.name) == ["Ada"])
        let database = connection.value.split(separator: "=").last.map(String.init) ?? ""
        #expect(try server.psql(database, "SELECT string_agg(version::text, ',') FROM userlist_schema")
            .trimmingCharacters(in: .whitespacesAndNewlines) == (1...PostgresSchema.currentVersion).map(String.init).joined(separator: ","))
    }

    @Test func aDatabaseFromANewerReleaseIsRefused() throws {
        let (server, connection) = try freshDatabase()
        _ = try PostgresUserRepository(connection: connection)
        let database = connection.value.split(separator: "=").last.map(String.init) ?? ""
        try server.psql(database, "INSERT INTO userlist_schema (version) VALUES (99)")
        #expect {
            _ = try PostgresUserRepository(connection: connection)
        } throws: { error in
            guard case .unavailable(let reason) = error as? UserError else { return false }
            return reason.contains("99") && reason.contains("upgrade userlistd")
        }
    }

    @Test func aPasswordInTheConnectionStringIsRefusedAndNeverShown() {
        for text in ["postgresql://ul:s3cret@db1/users", "host=db1 password=s3cret dbname=users",
                     "postgres://db1/users?user=ul&password=s3cret"] {
            #expect(PGConnectionString.isPostgres(text))
            #expect {
                _ = try PGConnectionString(text)
            } throws: { error in
                let description = String(describing: error)
                return description.contains("PGPASSFILE") && !description.contains("s3cret")
            }
        }
        #expect(!PGConnectionString.isPostgres("/var/lib/userlistd/users.sqlite3"))
        #expect(PGConnectionString.isPostgres("host=/run/postgresql dbname=users"))
    }

    @Test func theFeedDeliversOwnAndOtherCommitsOnceInCommitOrder() async throws {
        let connection = try freshDatabase().conninfo
        let here = try PostgresUserRepository(connection: connection)
        let elsewhere = try PostgresUserRepository(connection: connection)  // another daemon
        let feed = try PostgresChangeFeed(observing: here)
        let collector = ChangeCollector(feed)

        let ada = try await here.add(NewUser(name: "Ada", email: "ada@example.com"))
        var renamed = ada
        renamed.name = "Ada King"
        let saved = try await elsewhere.update(renamed)
        var again = saved
        again.name = "Ada, Countess of Lovelace"
        let savedAgain = try await here.update(again)
        try await elsewhere.remove(id: ada.id)
        #expect(try await elsewhere.importUsers(SampleUsers.generate(count: 3, seed: 5)) == 3)

        let changes = await collector.wait(for: 7, timeout: .seconds(20))
        #expect(Array(changes.prefix(4)) == [.added(ada), .saved(saved), .saved(savedAgain), .removed(id: ada.id)])
        #expect(changes.count == 7)
        #expect(changes.dropFirst(4).allSatisfy { if case .added = $0 { true } else { false } })
    }

    @Test func afterARestartReadsFailClearlyThenTheFeedCatchesUpWithWhatHappenedMeanwhile() async throws {
        let server = try PostgresTestServer.makePrivate()
        defer { server.tearDown() }
        let connection = try PGConnectionString(server.conninfo(try server.makeDatabase()))
        let here = try PostgresUserRepository(connection: connection)
        let feed = try PostgresChangeFeed(observing: here)
        let collector = ChangeCollector(feed)
        let ada = try await here.add(NewUser(name: "Ada", email: "ada@example.com"))

        server.stop()
        await #expect {
            _ = try await here.fetchUser(id: ada.id)
        } throws: { error in
            guard case .unavailable(let reason) = error as? UserError else { return false }
            return reason.contains("cannot be reached") && reason.contains(server.directory)
        }
        try server.start()
        // Another daemon writes while this feed is still reconnecting.
        let elsewhere = try PostgresUserRepository(connection: connection)
        var renamed = ada
        renamed.name = "Renamed While Away"
        let saved = try await elsewhere.update(renamed)
        #expect(try await here.fetchUser(id: ada.id) == saved)  // the pool reconnects by itself
        let changes = await collector.wait(for: 2, timeout: .seconds(20))
        #expect(changes == [.added(ada), .saved(saved)])
    }

    @Test func aFeedBehindAPrunedLogAsksForAResyncAndCarriesOnAfterIt() async throws {
        let (server, connection) = try freshDatabase()
        let database = connection.value.split(separator: "=").last.map(String.init) ?? ""
        let store = try PostgresUserRepository(connection: connection)
        let feed = try PostgresChangeFeed(connection: connection)
        let events = EventCollector(feed.events())
        let collector = ChangeCollector(feed)
        // Changes this feed never read, pruned in the same commit (as after a long absence).
        try server.psql(database, """
            BEGIN;
            INSERT INTO changes (kind, user_id) VALUES ('removed', gen_random_uuid()), ('removed', gen_random_uuid());
            UPDATE store_state SET pruned_through = (SELECT MAX(seq) FROM changes);
            DELETE FROM changes;
            SELECT pg_notify('userlist_changes', '');
            COMMIT;
            """)
        #expect(await events.wait { $0.contains(.resync) })
        // Subscribers get the resync in place of the lost changes; later changes flow as before.
        let ada = try await store.add(NewUser(name: "Ada", email: "ada@example.com"))
        #expect(await collector.wait(for: 2, timeout: .seconds(20)) == [.resync, .added(ada)])
    }
}

/// Collects a feed's connection events in the background.
final class EventCollector: Sendable {
    private final class Received: Sendable { let events = Lock<[PostgresChangeFeed.Event]>([]) }
    private let received = Received()
    /// Beats after every event collected.
    private let arrived = Pulse()
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<PostgresChangeFeed.Event>) {
        let received = self.received
        let arrived = self.arrived
        task = Task {
            for await event in stream {
                received.events.withLock { $0.append(event) }
                arrived.beat()
            }
        }
    }

    deinit { task.cancel() }

    func wait(timeout: Duration = .seconds(20), until condition: ([PostgresChangeFeed.Event]) -> Bool) async -> Bool {
        await arrived.until(timeout: timeout) { condition(received.events.withLock { $0 }) }
    }
}

extension PostgresStoreTests {
    @Test func keysMadeByAnotherFoldAreRecomputedOnOpen() async throws {
        let (server, connection) = try freshDatabase()
        let database = connection.value.split(separator: "=").last.map(String.init) ?? ""
        let users = SampleUsers.generate(count: 120, seed: 11)
        _ = try await PostgresUserRepository(connection: connection).importUsers(users)
        // As if an older release with another fold had written the keys.
        try server.psql(database, "UPDATE users SET name_key = 'zzz' || name_key, email_key = 'zzz' || email_key; "
                        + "UPDATE store_state SET key_fold = 'an older fold'")
        let reopened = try PostgresUserRepository(connection: connection)
        let (walked, _) = try await walk(reopened, PageRequest(limit: 50))
        #expect(walked == listOrder(users))
        let prefix = String(users[0].name.prefix(3))
        let expected = listOrder(users.filter {
            UserKey.fold($0.name).hasPrefix(UserKey.fold(prefix)) || UserKey.fold($0.email).hasPrefix(UserKey.fold(prefix))
        })
        #expect(try await walk(reopened, PageRequest(limit: 7, search: prefix)).users == expected)
    }
}
