import Foundation
import UserListTestSupport
import Glibc
import Testing
import UserListWire
import ThreadLocks

extension Fault {
    @Suite struct Sigterm {
        struct Outcome: Sendable {
            var goodbyes: [String?] = []  // per client: the goodbye reason, nil if none came
            var exitStatus: Int32?
            var exitSeconds = 0.0
            var storedProblems: [String] = []
            var failures: [String] = []
            var acks = 0
            var integrity = ""
            /// The size of the store's `-wal` file once the daemon exited.
            var walBytesLeft = 0
            /// The daemon's log (its warnings say why a checkpoint could not finish).
            var log = ""
        }

        /// Three clients save in a loop; SIGTERM; each gets goodbye, the daemon exits 0 (it
        /// does exit: only a hang misses the generous deadline), and every acknowledged save is
        /// in the store. How long the exit took is printed, not asserted.
        static func runUnderLoad() throws -> Outcome {
            let directory = try TempDirectory("sigterm")
            defer { directory.remove() }
            let daemon = ChildDaemon(directory: directory.path, sampleData: 30)
            defer { daemon.killHard() }
            try daemon.start()
            let setup = try FaultClient(path: daemon.socketPath)
            try setup.hello(key: "setup")
            _ = try setup.intent("list", "refresh")
            let ids = setup.userIDs
            setup.disconnect()
            guard ids.count >= 6 else { throw FaultFailure("too few sample users") }

            let ledger = SaveLedger()
            let stop = StopFlag()
            let reasons = Lock<[Int: String?]>([:])
            let group = DispatchGroup()
            for index in 0..<3 {
                group.enter()
                let path = daemon.socketPath
                let users = [ids[index * 2], ids[index * 2 + 1]]
                Thread {
                    renameLoop(path: path, key: "saver-\(index)", users: users, tag: "term c\(index)",
                               ledger: ledger, stop: stop, onEnd: { client in
                        _ = client.drainUntilClosed(timeout: generousDeadline)
                        let reason = client.received.lazy.compactMap { message -> String? in
                            if case .goodbye(let reason) = message { return reason }
                            return nil
                        }.first
                        reasons.withLock { $0[index] = reason }
                    })
                    group.leave()
                }.start()
            }
            // Let the saves get going, then stop the daemon the way systemd does.
            // Waits for the outcome (100 acknowledged saves), not for a guessed time.
            _ = ledger.waitFor { ledger.totalAcks >= 100 }
            let signalled = Date()
            daemon.signal(SIGTERM)
            var outcome = Outcome()
            outcome.exitStatus = daemon.waitForExit(timeout: generousDeadline)
            outcome.exitSeconds = Date().timeIntervalSince(signalled)
            stop.set()
            if group.wait(timeout: .now() + generousDeadline) != .success { outcome.failures.append("a client hung after SIGTERM") }
            outcome.goodbyes = (0..<3).map { index in reasons.withLock { $0[index] ?? nil } }
            daemon.killHard()
            // Read before the probes below open the store (they would start a WAL of their own).
            outcome.walBytesLeft = (try? FileManager.default.attributesOfItem(atPath: daemon.databasePath + "-wal"))?[.size] as? Int ?? 0
            outcome.log = daemon.log
            outcome.integrity = try StoreProbe.integrityCheck(daemon.databasePath)
            outcome.storedProblems = ledger.violations(against: try StoreProbe.users(daemon.databasePath))
            outcome.failures += ledger.failureList
            outcome.acks = ledger.totalAcks
            return outcome
        }

        @Test(.timeLimit(.minutes(5)))
        func sigtermUnderLoadSaysGoodbyeExitsCleanlyAndKeepsEverySave() async throws {
            let outcome = try await offPool { try Self.runUnderLoad() }
            #expect(outcome.exitStatus == 0, "exit status \(String(describing: outcome.exitStatus)) after \(outcome.exitSeconds) s")
            #expect(outcome.goodbyes.allSatisfy { $0 != nil }, "clients without goodbye: \(outcome.goodbyes)")
            #expect(outcome.integrity == "ok")
            #expect(outcome.storedProblems.isEmpty, "\(outcome.storedProblems.joined(separator: "\n"))")
            #expect(outcome.failures.isEmpty, "\(outcome.failures.joined(separator: "\n"))")
            #expect(outcome.acks >= 30)
            // 32 bytes is the WAL's header alone (a connection may rewrite it after the truncation):
            // no page of data, every commit is in the database file.
            #expect(outcome.walBytesLeft <= 32, "a clean stop left \(outcome.walBytesLeft) bytes in the WAL; the log: \(outcome.log)")
            print("SIGTERM: \(outcome.acks) acknowledged saves, exit \(String(describing: outcome.exitStatus)) after \(String(format: "%.3f", outcome.exitSeconds)) s, goodbye reasons \(outcome.goodbyes)")
        }

        /// PROTOCOL.md §4.2: on shutdown the goodbye's reason is `"shutting_down"`.
        @Test(.timeLimit(.minutes(5)))
        func theShutdownGoodbyeSaysShuttingDown() async throws {
            let outcome = try await offPool { try Self.runUnderLoad() }
            #expect(outcome.goodbyes.allSatisfy { $0 == "shutting_down" }, "reasons: \(outcome.goodbyes)")
        }
    }
}
