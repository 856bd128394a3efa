import Foundation
import Testing
import UserListTestSupport

/// Several real `userlistd` processes sharing one real PostgreSQL, as on several hosts: a change
/// through one reaches a watcher on the other, migrations happen once, kill -9 of one leaves the
/// other working, and a PostgreSQL restart in the middle of renames loses none that was
/// acknowledged.
@Suite(.childProcesses, .serialized,
       .enabled(if: PostgresTestServer.isAvailable,
                "PostgreSQL 15 is missing (/usr/lib/postgresql/15/bin, or no 'postgres' user to run it as root): run scripts/setup.sh"),
       .enabled(if: RealDaemon.skipReason == nil, "userlistd is not built: run 'swift build' before 'swift test'"))
struct PostgresProcessTests {
    /// Ids of the first `count` users in the database, in list order.
    func userIDs(_ server: PostgresTestServer, _ database: String, count: Int) throws -> [String] {
        try server.psql(database, "SELECT id FROM users ORDER BY name_key, id LIMIT \(count)")
            .split(separator: "\n").map(String.init)
    }

    @Test func twoDaemonsStartingTogetherMigrateOnceAndARenameThroughOneReachesAWatchOnTheOther() async throws {
        let server = try PostgresTestServer.shared()
        let database = try server.makeDatabase()
        // Both start at once on an empty database: one migrates, the other waits for the lock.
        let a = try PostgresDaemon(database: server.uri(database), sampleData: 50)
        defer { a.tearDown() }
        let b = try PostgresDaemon(database: server.conninfo(database), sampleData: 50)
        defer { b.tearDown() }
        try await a.waitUntilAnswering()
        try await b.waitUntilAnswering()
        #expect(try server.psql(database, "SELECT COUNT(*) FROM userlist_schema").trimmingCharacters(in: .whitespacesAndNewlines)
                == "4")  // v1, v2 (history), v3 (import staging), v4 (an import one entry), each applied once
        #expect(try server.psql(database, "SELECT COUNT(*) FROM users").trimmingCharacters(in: .whitespacesAndNewlines) == "50")

        let watch = try b.watch()
        defer { watch.stop() }
        #expect(await watch.wait { $0.contains("\"connected\"") })
        let id = try #require(try userIDs(server, database, count: 1).first)
        let name = "Renamed On Host A \(UUID().uuidString.prefix(6))"
        let rename = try a.userctl(["rename", id, name])
        #expect(rename.status == 0, "\(rename.stderr)")
        #expect(await watch.wait { $0.contains(name) }, "the watch on B printed: \(watch.output())\nB's log: \(b.log())")
        // And B's own listing shows it.
        let shown = try b.userctl(["show", id, "--json"])
        #expect(shown.stdout.contains(name))

        // A crashing does not disturb B: its saves and its watcher carry on.
        a.kill9()
        let after = "Renamed On Host B \(UUID().uuidString.prefix(6))"
        let renameOnB = try b.userctl(["rename", id, after])
        #expect(renameOnB.status == 0, "\(renameOnB.stderr)")
        #expect(await watch.wait { $0.contains(after) })
    }

    @Test func aPostgreSQLRestartDuringRenamesLosesNoAcknowledgedOne() async throws {
        let server = try PostgresTestServer.makePrivate()
        defer { server.tearDown() }
        let database = try server.makeDatabase()
        let a = try PostgresDaemon(database: server.conninfo(database), sampleData: 60)
        defer { a.tearDown() }
        try await a.waitUntilAnswering()
        let b = try PostgresDaemon(database: server.conninfo(database))
        defer { b.tearDown() }
        try await b.waitUntilAnswering()
        let watch = try b.watch()
        defer { watch.stop() }
        #expect(await watch.wait { $0.contains("\"connected\"") })
        let ids = try userIDs(server, database, count: 40)
        #expect(ids.count == 40)

        var acknowledged: [(id: String, name: String)] = []
        var refused: [String] = []
        for (index, id) in ids.enumerated() {
            if index == 12 { server.stop() }
            if index == 20 { try server.start() }
            let name = "Durable \(index) \(UUID().uuidString.prefix(4))"
            let rename = try a.userctl(["rename", id, name])
            if rename.status == 0 {
                acknowledged.append((id, name))
            } else {
                refused.append(rename.stderr)
            }
        }
        // While PostgreSQL was down, renames were refused with a clear reason (exit 69).
        #expect(!refused.isEmpty)
        #expect(refused.allSatisfy { $0.contains("unavailable") || $0.contains("cannot be reached") }, "\(refused)")
        #expect(acknowledged.count >= 12 + 10, "\(refused)")
        // Every acknowledged rename is in the database...
        for (id, name) in acknowledged {
            #expect(try server.psql(database, "SELECT name FROM users WHERE id = '\(id)'")
                .trimmingCharacters(in: .whitespacesAndNewlines) == name)
        }
        // ...both daemons survived, and B's watcher saw the renames made after the restart.
        #expect(a.isRunning && b.isRunning)
        let last = try #require(acknowledged.last)
        #expect(await watch.wait { $0.contains(last.name) }, "B's log: \(b.log())")
    }

    /// A daemon that missed changes it can no longer read (frozen while they were made, and the
    /// log pruned past them meanwhile) resyncs: its session's list, loaded before, ends up
    /// showing the rows as they are, without anyone asking it to reload.
    @Test func aDaemonThatMissedPrunedChangesResyncsItsSessions() async throws {
        let server = try PostgresTestServer.shared()
        let database = try server.makeDatabase()
        let a = try PostgresDaemon(database: server.conninfo(database), sampleData: 30)
        defer { a.tearDown() }
        try await a.waitUntilAnswering()
        let b = try PostgresDaemon(database: server.conninfo(database))
        defer { b.tearDown() }
        try await b.waitUntilAnswering()
        let key = "resync-\(UUID().uuidString.prefix(6))"
        let ids = try userIDs(server, database, count: 3)
        // The session: kept attached by a watcher; `list` in it shows its rows as they are.
        let watch = try b.watch(session: key)
        defer { watch.stop() }
        #expect(await watch.wait { $0.contains("\"connected\"") })
        let before = try b.userctl(["--session", key, "--json", "list"])
        #expect(before.status == 0, "\(before.stderr)")
        for id in ids { #expect(before.stdout.contains(id.lowercased())) }

        b.pause()
        var names: [String] = []
        for id in ids {
            let name = "Missed By B \(UUID().uuidString.prefix(6))"
            let rename = try a.userctl(["rename", id, name])
            #expect(rename.status == 0, "\(rename.stderr)")
            names.append(name)
        }
        _ = try server.psql(database, """
            UPDATE store_state SET pruned_through = (SELECT MAX(seq) FROM changes);
            DELETE FROM changes;
            """)
        b.resume()

        let deadline = ContinuousClock.now + .seconds(120)
        var shown = ""
        while ContinuousClock.now < deadline {
            shown = try b.userctl(["--session", key, "--json", "list"]).stdout
            if names.allSatisfy(shown.contains) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(names.allSatisfy(shown.contains), "B's session shows: \(shown)\nB's log: \(b.log())")
        #expect(b.log().contains("pruned past"), "the rows came by a resync: \(b.log())")
        #expect(b.log().components(separatedBy: "Client opened a session").count == 2, "one session throughout: \(b.log())")
    }

    /// PostgreSQL stopped: the daemon keeps running, says so in `STATUS=` and in `status`,
    /// refuses writes clearly, and logs the loss and the return once each (not once per retry).
    @Test func anUnreachableStoreIsShownInStatusAndLoggedOncePerTransition() async throws {
        let server = try PostgresTestServer.makePrivate()
        defer { server.tearDown() }
        let database = try server.makeDatabase()
        let notifyDirectory = "/tmp/ulpgn-" + String(UUID().uuidString.prefix(8))
        try FileManager.default.createDirectory(atPath: notifyDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: notifyDirectory) }
        let notify = try NotifyListener(path: notifyDirectory + "/notify.sock")
        defer { notify.close() }
        let daemon = try PostgresDaemon(database: server.conninfo(database), sampleData: 10, environment: ["NOTIFY_SOCKET": notify.path])
        defer { daemon.tearDown() }
        try await daemon.waitUntilAnswering()
        let id = try #require(try userIDs(server, database, count: 1).first)

        func status() throws -> [String: Any] {
            let run = try daemon.userctl(["--json", "status"])
            let object = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
            return object ?? [:]
        }
        /// Waits for a `STATUS=` the daemon sends from the same health state that `status` reads.
        func waitForStatuses(_ what: String, _ holds: @escaping @Sendable ([String]) -> Bool) async throws {
            let seen = try await offPool { notify.waitForStatuses(holds) }
            #expect(seen, "\(what): STATUS= \(notify.statuses), log: \(daemon.log())")
        }
        #expect(try status()["store_available"] as? Bool == true)

        server.stop()
        try await waitForStatuses("STATUS= saying the store is unavailable") {
            $0.contains { $0.contains("the store is unavailable, reconnecting") }
        }
        #expect(try status()["store_available"] as? Bool == false)
        #expect((try status()["store_problem"] as? String)?.isEmpty == false)
        let refused = try daemon.userctl(["rename", id, "Renamed While Down"])
        #expect(refused.status == 69, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.contains("unavailable") || refused.stderr.contains("cannot be reached"), "\(refused.stderr)")

        try server.start()
        try await waitForStatuses("STATUS= back to normal") { statuses in
            guard let down = statuses.lastIndex(where: { $0.contains("unavailable") }) else { return false }
            return statuses[(down + 1)...].contains { $0.hasPrefix("Serving") && !$0.contains("unavailable") }
        }
        #expect(try status()["store_available"] as? Bool == true)
        #expect(try status()["store_problem"] is NSNull)
        let renamed = try daemon.userctl(["rename", id, "Renamed After"])
        #expect(renamed.status == 0, "\(renamed.stderr)")
        let log = daemon.log()
        #expect(log.components(separatedBy: "The store is unavailable").count == 2, "once, however many retries: \(log)")
        #expect(log.components(separatedBy: "The store is available again").count == 2, "\(log)")
    }
}
