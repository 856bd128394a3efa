import Foundation
import UserListTestSupport
import Glibc
import Testing
import UserListWire
import ThreadLocks

/// What the renaming clients saw: every save they started, and the ones acknowledged.
final class SaveLedger: Sendable {
    struct Entry: Sendable {
        var acked: (name: String, version: Int)?
        /// The save sent after the last acknowledged one, if any (its reply may have been lost).
        var inFlight: String?
        var ackCount = 0
    }

    private let entries = Lock<[String: Entry]>([:])
    private let failures = Lock<[String]>([])
    /// Beats after every acknowledged or failed save.
    private let recorded = Pulse()

    func attempt(_ id: String, _ name: String) { entries.withLock { $0[id, default: Entry()].inFlight = name } }

    func ack(_ id: String, _ name: String, _ version: Int) {
        entries.withLock {
            $0[id, default: Entry()].acked = (name, version)
            $0[id, default: Entry()].inFlight = nil
            $0[id, default: Entry()].ackCount += 1
        }
        recorded.beat()
    }

    func fail(_ text: String) {
        failures.withLock { $0.append(text) }
        recorded.beat()
    }

    /// Blocks until `condition` holds, re-checked after each ack or failure; false past the
    /// generous deadline.
    func waitFor(_ condition: () -> Bool) -> Bool { recorded.blockingUntil(condition) }

    var snapshot: [String: Entry] { entries.withLock { $0 } }
    var failureList: [String] { failures.withLock { $0 } }
    var totalAcks: Int { entries.withLock { $0.values.reduce(0) { $0 + $1.ackCount } } }

    /// Checks every acknowledged save against the stored users; returns the violations.
    func violations(against stored: [String: StoredUser]) -> [String] {
        var problems: [String] = []
        for (id, entry) in snapshot {
            guard let acked = entry.acked else { continue }
            guard let user = stored[id] else {
                problems.append("\(id): acknowledged v\(acked.version) '\(acked.name)' but the user is not stored")
                continue
            }
            if user.version == acked.version {
                if user.name != acked.name {
                    problems.append("\(id): acknowledged v\(acked.version) '\(acked.name)' but stored \(user)")
                }
            } else if user.version == acked.version + 1, let pending = entry.inFlight, user.name == pending {
                // An unacknowledged save that committed before the reply went out: allowed.
            } else {
                problems.append("\(id): acknowledged v\(acked.version) '\(acked.name)' (in flight: \(entry.inFlight ?? "none")) but stored \(user)")
            }
        }
        return problems
    }
}

/// One renaming client: opens each of its users in turn, renames it and saves, recording
/// every acknowledged save, until the connection goes away or `stop` is set.
func renameLoop(path: String, key: String, users: [String], tag: String, ledger: SaveLedger,
                stop: StopFlag, latencies: Samples? = nil, maxSaves: Int = .max,
                nameLength: Int = 0, onEnd: (FaultClient) -> Void = { _ in }) {
    let client: FaultClient
    do {
        client = try FaultClient(path: path)
        try client.hello(key: key)
    } catch {
        return  // the daemon was killed before this client got in
    }
    var counter = 0
    outer: while !stop.isSet && counter < maxSaves {
        for id in users {
            if stop.isSet || counter >= maxSaves { break outer }
            counter += 1
            var name = "\(tag) #\(counter)"
            if nameLength > name.count { name += String(repeating: "x", count: nameLength - name.count) }
            do {
                let opened = try client.intent("session", "open_user", ["id": .string(id)])
                guard opened.isOK else {
                    ledger.fail("\(key): open_user \(id) failed: \(opened.failure.map { "\($0.code.rawValue): \($0.message)" } ?? "?")")
                    break outer
                }
                _ = try client.intent("detail", "set_draft_name", ["name": .string(name)])
                ledger.attempt(id, name)
                let started = Date()
                let saved = try client.intent("detail", "save")
                latencies?.add(Date().timeIntervalSince(started))
                if saved.isOK, let version = saved.result?["version"]?.int64Value {
                    ledger.ack(id, name, Int(version))
                } else {
                    ledger.fail("\(key): save of \(id) as '\(name)' was not ok: \(saved.failure.map { "\($0.code.rawValue): \($0.message)" } ?? "no version in \(String(describing: saved.result))")")
                }
            } catch {
                break outer  // killed: the reply never came
            }
        }
    }
    onEnd(client)
    client.disconnect()
}

extension Fault {
    @Suite struct KillNine {
        @Test(.timeLimit(.minutes(10)))
        func everyAcknowledgedSaveSurvivesKillNineDuringARenameStorm() async throws {
            try await offPool { try Self.run() }
        }

        static func run() throws {
            let directory = try TempDirectory("kill9")
            defer { directory.remove() }
            let daemon = ChildDaemon(directory: directory.path, sampleData: 30)
            defer { daemon.killHard() }
            try daemon.start()

            // Which users each client owns (its own, so versions only race with the kill).
            let setup = try FaultClient(path: daemon.socketPath)
            try setup.hello(key: "setup")
            #expect(try setup.intent("list", "refresh").isOK)
            let ids = setup.userIDs
            setup.disconnect()
            try #require(ids.count >= 6, "the sample store should have at least 6 users")
            let owned = (0..<3).map { [ids[$0 * 2], ids[$0 * 2 + 1]] }

            let ledger = SaveLedger()
            var generator = SplitMix64(seed: 0x0FA1_7009)
            var slowestWelcome = 0.0
            for cycle in 0..<20 {
                if cycle > 0 {
                    let spawned = Date()
                    try daemon.start()
                    // The restarted daemon serves: a hello is welcomed (how fast is printed below).
                    let probe = try FaultClient(path: daemon.socketPath)
                    try probe.hello(key: "probe")
                    slowestWelcome = max(slowestWelcome, Date().timeIntervalSince(spawned))
                    probe.disconnect()
                }
                let stop = StopFlag()
                let group = DispatchGroup()
                for index in 0..<3 {
                    group.enter()
                    let path = daemon.socketPath
                    let users = owned[index]
                    Thread {
                        renameLoop(path: path, key: "renamer-\(index)", users: users,
                                   tag: "c\(index) k\(cycle)", ledger: ledger, stop: stop)
                        group.leave()
                    }.start()
                }
                // The kill lands mid-storm: after this cycle's first acknowledged save (waited
                // for, however slow the machine), then a random 50-400 ms more. The random delay
                // only picks the moment of the kill; it decides no outcome.
                let acksBefore = ledger.totalAcks
                #expect(ledger.waitFor { ledger.totalAcks > acksBefore || !ledger.failureList.isEmpty },
                        "cycle \(cycle): no save was acknowledged")
                let delay = Int.random(in: 50...400, using: &generator)
                usleep(useconds_t(delay * 1000))
                daemon.killHard()
                stop.set()
                #expect(group.wait(timeout: .now() + generousDeadline) == .success, "cycle \(cycle): a client hung after the kill")
            }

            // Every acknowledged save is in the file, and the file is sound.
            #expect(try StoreProbe.integrityCheck(daemon.databasePath) == "ok")
            let stored = try StoreProbe.users(daemon.databasePath)
            let problems = ledger.violations(against: stored)
            #expect(problems.isEmpty, "lost acknowledged saves:\n\(problems.joined(separator: "\n"))")
            #expect(ledger.failureList.isEmpty, "unexpected failures:\n\(ledger.failureList.joined(separator: "\n"))")
            #expect(ledger.totalAcks >= 20, "too few saves were acknowledged (\(ledger.totalAcks)) for the test to mean much")

            // A fresh daemon serves at once and shows what the file holds.
            let spawned = Date()
            try daemon.start()
            let reader = try FaultClient(path: daemon.socketPath)
            try reader.hello(key: "reader")
            let freshWelcome = Date().timeIntervalSince(spawned)
            for id in owned.joined() {
                let reply = try reader.intent("session", "open_user", ["id": .string(id)])
                let user = reply.result
                #expect(user?["name"]?.stringValue == stored[id]?.name)
                #expect(user?["version"]?.int64Value.map(Int.init) == stored[id]?.version)
            }
            reader.disconnect()
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit(timeout: generousDeadline) == 0)
            print("kill -9: \(ledger.totalAcks) acknowledged saves over 20 cycles; slowest restart-to-welcome \(String(format: "%.3f", slowestWelcome)) s, fresh start \(String(format: "%.3f", freshWelcome)) s")
        }
    }
}
