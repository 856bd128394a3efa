import Foundation
import UserListTestSupport
import Glibc
import Testing
import UserListWire

extension Fault {
    /// One client attaches and stops reading while other sessions save long names as fast as
    /// they can: the others' saves all go through (their latency is printed, not asserted: it
    /// belongs to `make bench`), the daemon's memory stays bounded, and the
    /// slow client, once it reads, gets a fresh snapshot (a new epoch) and ends up with the
    /// document a fresh client sees.
    @Suite struct SlowReader {
        @Test(.timeLimit(.minutes(5)))
        func aClientThatStopsReadingCostsOthersNothing() async throws {
            let directory = try TempDirectory("slow")
            defer { directory.remove() }
            let daemon = ChildDaemon(directory: directory.path, sampleData: 30, extra: ["--client-buffer-bytes", "16384", "--intents-per-second", "100000"])
            defer { daemon.killHard() }
            try daemon.start()
            let result = try await offPool { try Self.run(daemon) }
            print("slow reader: \(result.report)")
        }

        /// PROTOCOL.md §7: "Replies, events and errors are never dropped": the slow client gets
        /// one `changed` event per save made by the other sessions.
        @Test(.timeLimit(.minutes(5)))
        func aSlowClientStillGetsEveryEvent() async throws {
            let directory = try TempDirectory("slow-events")
            defer { directory.remove() }
            let daemon = ChildDaemon(directory: directory.path, sampleData: 30, extra: ["--client-buffer-bytes", "16384", "--intents-per-second", "100000"])
            defer { daemon.killHard() }
            try daemon.start()
            let result = try await offPool { try Self.run(daemon) }
            #expect(result.changedEvents == result.saves, "\(result.changedEvents) changed events for \(result.saves) saves")
        }

        /// PROTOCOL.md §7: a client that does not read while the queue holds more than its bound
        /// of frames that cannot be dropped is sent `goodbye` `slow_client`, then disconnected.
        @Test(.timeLimit(.minutes(5)))
        func aClientThatNeverReadsItsPongsIsToldItIsTooSlow() async throws {
            let directory = try TempDirectory("slow-pongs")
            defer { directory.remove() }
            // Pings count against the message rate: lift it so the pongs themselves pile up.
            let daemon = ChildDaemon(directory: directory.path, sampleData: 5,
                                     extra: ["--client-buffer-bytes", "16384", "--intents-per-second", "1000000"])
            defer { daemon.killHard() }
            try daemon.start()
            let path = daemon.socketPath
            let last = try await offPool { () -> String in
                let client = try FaultClient(path: path)
                try client.hello(key: "pings")
                // 8 MB of pongs owed (far past the 4 MB hard limit and the kernel's buffer), never read.
                let nonce = JSONValue.string(String(repeating: "p", count: 1000))
                let ping = try FrameEncoder(maximumFrameSize: 1 << 20).encode(ClientMessage.ping(nonce: nonce))
                let burst = [UInt8]((0..<8000).map { _ in ping }.joined())
                RawSocket.sendAll(client.fd, burst)
                _ = client.drainUntilClosed(timeout: generousDeadline)
                return client.received.last.map { message in
                    if case .goodbye(let reason) = message { return "goodbye \(reason)" }
                    return message.type
                } ?? "nothing"
            }
            #expect(last == "goodbye slow_client", "the last message before the close was \(last)")
            #expect(daemon.reap() == nil)
        }

        struct Result: Sendable {
            let report: String
            let changedEvents: Int
            let saves: Int
        }

        static func run(_ daemon: ChildDaemon) throws -> Result {
            let path = daemon.socketPath
            let monitor = try FaultClient(path: path)
            try monitor.hello(key: "monitor")
            #expect(try monitor.intent("list", "refresh").isOK)
            let ids = monitor.userIDs
            try #require(ids.count >= 4)

            // The slow client says hello and never reads again (it does not even read the welcome).
            let slow = try FaultClient(path: path)
            slow.send(slow.helloMessage(key: "slow"))
            let attached = try eventually {
                let rows = try monitor.intent("session", "sessions").result?.arrayValue ?? []
                return rows.contains { $0["key"]?.stringValue == "slow" && $0["clients"]?.int64Value == 1 }
            }
            try #require(attached, "the slow client's session never appeared")
            // Its first page may load after this baseline: that adds one page (kilobytes) to
            // the growth measured against a 50 MB bound.
            let baselineRSS = daemon.residentBytes

            // Two other sessions save 200-character names; each save changes the slow session's
            // list too (the change feed), so its backlog grows by a patch and an event per save.
            // The daemon's RSS is sampled as each save is answered: when the backlog has grown.
            let peakRSS = Samples()
            let latencies = Samples { peakRSS.add(Double(daemon.residentBytes)) }
            let ledger = SaveLedger()
            let savesPerDriver = 200
            runThreads(2) { index in
                renameLoop(path: path, key: "driver-\(index)", users: [ids[index * 2], ids[index * 2 + 1]],
                           tag: "slow-test d\(index)", ledger: ledger, stop: StopFlag(), latencies: latencies,
                           maxSaves: savesPerDriver, nameLength: 200)
            }
            let growth = Int(peakRSS.all.max() ?? 0) - baselineRSS
            let p99 = latencies.percentile(0.99)
            #expect(ledger.totalAcks == 2 * savesPerDriver, "\(ledger.failureList.prefix(3))")
            #expect(growth < 50 << 20, "VmRSS grew by \(growth >> 20) MB over \(baselineRSS >> 20) MB")

            // The slow client finally reads: its backlog, then a fresh snapshot with a new epoch,
            // and a `changed` event for every save. Read until all of that is there (or a
            // generous deadline passes), never until a quiet spell of a guessed length.
            func epochs(_ client: FaultClient) -> [Int] {
                client.received.compactMap { message -> Int? in
                    if case .snapshot(let snapshot) = message { return snapshot.epoch }
                    return nil
                }
            }
            func welcomeEpoch(_ client: FaultClient) -> Int? {
                client.received.lazy.compactMap { message -> Int? in
                    if case .welcome(let welcome) = message { return welcome.epoch }
                    return nil
                }.first
            }
            func changedCount(_ client: FaultClient) -> Int {
                client.received.filter { message in
                    if case .event(let event) = message { return event.name == "changed" }
                    return false
                }.count
            }
            let saves = ledger.totalAcks
            _ = slow.readUntil { client in
                let seen = epochs(client)
                return seen.count >= 2 && seen.last != welcomeEpoch(client) && changedCount(client) >= saves
            }
            let epochs = epochs(slow)
            let firstEpoch = welcomeEpoch(slow)
            #expect(firstEpoch != nil, "the slow client never got its welcome")
            #expect(epochs.count >= 2 && epochs.last != firstEpoch, "no fresh snapshot after the backlog: snapshot epochs \(epochs), welcome epoch \(String(describing: firstEpoch))")
            #expect(!slow.isClosed, "the slow client was disconnected")

            // Its document is what a fresh client of the same session sees.
            let fresh = try FaultClient(path: path)
            try fresh.hello(key: "slow")
            // Both read until their documents agree (or the deadline passes: then they differ).
            _ = eventually(every: .zero) {
                _ = try? fresh.readMessage(timeout: 0.05)
                _ = try? slow.readMessage(timeout: 0.05)
                return fresh.document != .null && slow.document == fresh.document
            }
            #expect(slow.document == fresh.document, "the slow client's document differs from a fresh client's")
            #expect(daemon.reap() == nil)
            let received = slow.received.count
            let changed = changedCount(slow)
            return Result(report: "\(changed) changed events for \(ledger.totalAcks) saves; p50 \(String(format: "%.1f", latencies.percentile(0.5) * 1000)) ms, p90 \(String(format: "%.1f", latencies.percentile(0.9) * 1000)) ms, max \(String(format: "%.1f", latencies.percentile(1) * 1000)) ms, p99 \(String(format: "%.1f", p99 * 1000)) ms over \(latencies.all.count) saves, RSS \(baselineRSS >> 20) MB +\(growth >> 10) KB, slow client read \(received) messages, snapshot epochs \(epochs.count), out-of-step patches \(slow.outOfStep)", changedEvents: changed, saves: ledger.totalAcks)
        }
    }
}
