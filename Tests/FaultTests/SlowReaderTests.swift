import Foundation
import Glibc
import Testing
import UserListWire

extension Fault {
    /// One client attaches and stops reading while other sessions save long names as fast as
    /// they can: the others' save latency stays low, the daemon's memory stays bounded, and the
    /// slow client, once it reads, gets a fresh snapshot (a new epoch) and ends up with the
    /// document a fresh client sees.
    @Suite struct SlowReader {
        @Test(.timeLimit(.minutes(1)))
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
        @Test(.timeLimit(.minutes(1)))
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
        @Test(.timeLimit(.minutes(1)))
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
                usleep(500_000)
                _ = client.drainUntilClosed(timeout: 10)
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
            var attached = false
            for _ in 0..<50 where !attached {
                let rows = try monitor.intent("session", "sessions").result?.arrayValue ?? []
                attached = rows.contains { $0["key"]?.stringValue == "slow" && $0["clients"]?.int64Value == 1 }
                if !attached { usleep(50_000) }
            }
            try #require(attached, "the slow client's session never appeared")
            usleep(300_000)  // its first page loads
            let baselineRSS = daemon.residentBytes

            // Two other sessions save 200-character names; each save changes the slow session's
            // list too (the change feed), so its backlog grows by a patch and an event per save.
            let latencies = Samples()
            let ledger = SaveLedger()
            let stop = StopFlag()
            let peakRSS = Samples()
            let sampler = Thread {
                while !stop.isSet {
                    peakRSS.add(Double(daemon.residentBytes))
                    usleep(50_000)
                }
            }
            sampler.start()
            let savesPerDriver = 200
            runThreads(2) { index in
                renameLoop(path: path, key: "driver-\(index)", users: [ids[index * 2], ids[index * 2 + 1]],
                           tag: "slow-test d\(index)", ledger: ledger, stop: StopFlag(), latencies: latencies,
                           maxSaves: savesPerDriver, nameLength: 200)
            }
            stop.set()
            let growth = Int(peakRSS.all.max() ?? 0) - baselineRSS
            let p99 = latencies.percentile(0.99)
            #expect(ledger.totalAcks == 2 * savesPerDriver, "\(ledger.failureList.prefix(3))")
            #expect(p99 < 0.2, "save→reply p99 \(p99) s with a client that does not read")
            #expect(growth < 50 << 20, "VmRSS grew by \(growth >> 20) MB over \(baselineRSS >> 20) MB")

            // The slow client finally reads: its backlog, then a fresh snapshot with a new epoch.
            slow.drainUntilQuiet(quiet: 1, limit: 20)
            let epochs = slow.received.compactMap { message -> Int? in
                if case .snapshot(let snapshot) = message { return snapshot.epoch }
                return nil
            }
            let firstEpoch = slow.received.lazy.compactMap { message -> Int? in
                if case .welcome(let welcome) = message { return welcome.epoch }
                return nil
            }.first
            #expect(firstEpoch != nil, "the slow client never got its welcome")
            #expect(epochs.count >= 2 && epochs.last != firstEpoch, "no fresh snapshot after the backlog: snapshot epochs \(epochs), welcome epoch \(String(describing: firstEpoch))")
            #expect(!slow.isClosed, "the slow client was disconnected")

            // Its document is what a fresh client of the same session sees.
            let fresh = try FaultClient(path: path)
            try fresh.hello(key: "slow")
            fresh.drainUntilQuiet(quiet: 0.5)
            slow.drainUntilQuiet(quiet: 0.5)
            #expect(slow.document == fresh.document, "the slow client's document differs from a fresh client's")
            #expect(daemon.reap() == nil)
            let received = slow.received.count
            let changed = slow.received.filter { message in
                if case .event(let event) = message { return event.name == "changed" }
                return false
            }.count
            return Result(report: "\(changed) changed events for \(ledger.totalAcks) saves; p50 \(String(format: "%.1f", latencies.percentile(0.5) * 1000)) ms, p90 \(String(format: "%.1f", latencies.percentile(0.9) * 1000)) ms, max \(String(format: "%.1f", latencies.percentile(1) * 1000)) ms, p99 \(String(format: "%.1f", p99 * 1000)) ms over \(latencies.all.count) saves, RSS \(baselineRSS >> 20) MB +\(growth >> 10) KB, slow client read \(received) messages, snapshot epochs \(epochs.count), out-of-step patches \(slow.outOfStep)", changedEvents: changed, saves: ledger.totalAcks)
        }
    }
}
