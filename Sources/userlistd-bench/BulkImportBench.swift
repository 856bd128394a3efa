import Foundation
import Glibc
import UserListTestSupport
import UserListWire

/// What an import through `userctl` costs everyone else: another client's round trips while
/// `userctl import` streams N users (1,000,000; 100,000 quick) into the daemon, against the same
/// round trips just before, on the same daemon. The other client is on a detail screen and
/// alternates `set_draft_name` (no write) and `save` (a write, which queues behind an import
/// chunk's transaction) → each reply. Also the import's own rate, end to end through userctl,
/// and whether the daemon kept feeding its watchdog (the longest wait between WATCHDOG=1s).
///
/// The file is generated here: random ids, names in random order (a file sorted by name, as
/// `userctl export` writes it, would flatter the store's name index).
enum BulkImportBench {
    static let section = "bulk"
    static let watchdogMicros = 2_000_000

    /// The same import on each store: an SQLite file, then (PostgreSQL 15 installed) a database
    /// on a scratch server of the bench's own, `fsync` on.
    static func run(_ context: BenchContext) {
        let count = context.bulkUsers ?? (context.quick ? 100_000 : 1_000_000)
        print("== bulk import through userctl (\(count) users) and another client's round trips")
        let userctl = "\(context.binDirectory)/userctl"
        guard FileManager.default.isExecutableFile(atPath: userctl) else {
            return context.report.note("bulk: \(userctl) not found; build it: swift build -c release --product userctl")
        }
        let file = context.temporaryPath("bulk-import.json")
        do { try writeImportFile(file, count: count) } catch {
            return context.report.note("bulk: cannot write the import file: \(error)")
        }
        defer { unlink(file) }
        // A store of its own: the million users it imports must not stay for the later sections.
        let store = context.temporaryPath("bulk.sqlite3")
        if !context.postgresOnly {
            measure(context, "SQLite", database: store, file: file, count: count, userctl: userctl)
            for suffix in ["", "-wal", "-shm"] { unlink(store + suffix) }
        }
        if context.sqliteOnly { return }
        if let reason = PostgresTestServer.skipReason {
            return context.report.note("bulk: PostgreSQL skipped: \(reason)")
        }
        do {
            let server = try PostgresTestServer.makePrivate(durable: true)
            defer { server.tearDown() }
            measure(context, "PostgreSQL", database: server.conninfo(try server.makeDatabase()), file: file,
                    count: count, userctl: userctl)
        } catch {
            context.report.failed(section, "scratch PostgreSQL start", error)
        }
    }

    private static func measure(_ context: BenchContext, _ storeName: String, database: String, file: String,
                                count: Int, userctl: String) {
        // A 2 s watchdog, as `WatchdogSec=2` would set it: the daemon should ping every second.
        let base = context.bulkBase.map { ["--sample-data", String($0)] } ?? []
        context.withDaemon(section, extraFlags: base, watchdogMicros: watchdogMicros,
                           database: database) { daemon throws(BenchError) in
            let other = try OtherClient(daemon.socketPath)
            let before = try other.roundTrips(for: context.quick ? 3 : 10)

            let importer = Process()
            importer.executableURL = URL(fileURLWithPath: userctl)
            importer.arguments = ["--socket", daemon.socketPath, "--no-spawn", "import", "--quiet", file]
            importer.standardOutput = FileHandle.nullDevice
            let started = monotonicNanos()
            do { try importer.run() } catch { throw BenchError("cannot start userctl: \(error)") }
            var during = (drafts: Samples(), saves: Samples())
            while importer.isRunning {
                let round = try other.roundTrips(for: 0.5)
                during.drafts.append(contentsOf: round.drafts)
                during.saves.append(contentsOf: round.saves)
            }
            let took = monotonicNanos() - started
            importer.waitUntilExit()
            guard importer.terminationStatus == 0 else {
                throw BenchError("userctl import exited \(importer.terminationStatus)")
            }
            reportWatchdog(context, storeName, daemon, started: started, took: took)
            let rate = Double(count) / (Double(took) / 1e9)
            context.report.add(section, "\(storeName): userctl import of \(grouped(count)) users (random order) "
                               + "into a running daemon",
                               value: "\(grouped(Int(rate))) users/s (\(formatNanos(took)))", target: "≥ 100,000/s",
                               met: rate >= 100_000)
            context.report.add(section, "\(storeName): daemon VmHWM after the import",
                               value: daemon.peakKiB().map { "\($0 / 1024) MiB" } ?? "?")
            reportOtherClient(context, storeName, before: before, during: during)
        }
    }

    /// The longest the watchdog went without a ping while the import ran.
    private static func reportWatchdog(_ context: BenchContext, _ storeName: String, _ daemon: DaemonProcess,
                                       started: UInt64, took: UInt64) {
        let pings = daemon.watchdog?.arrivals.filter { $0 >= started } ?? []
        let gaps = zip(pings.dropFirst(), pings).map { $0 - $1 }
        let longest = max(gaps.max() ?? 0, pings.first.map { $0 - started } ?? took,
                          pings.last.map { started + took - $0 } ?? 0)
        context.report.add(section, "\(storeName): longest wait for WATCHDOG=1 during the import "
                           + "(\(pings.count) pings; WATCHDOG_USEC 2 s, pinged every 1 s)",
                           value: formatNanos(longest), target: "< 2 s", met: longest < UInt64(watchdogMicros) * 1_000)
    }

    /// The other client's round trips during the import against the same alone before it.
    private static func reportOtherClient(_ context: BenchContext, _ storeName: String,
                                          before: (drafts: Samples, saves: Samples),
                                          during: (drafts: Samples, saves: Samples)) {
        let pairs = [("set_draft_name → reply", before.drafts, during.drafts),
                     ("save → reply", before.saves, during.saves)]
        for (label, alone, busy) in pairs {
            let metric = "\(storeName): another client's \(label) during the import"
            context.report.add(section, "\(metric) p50 (n=\(grouped(busy.count)))",
                               value: formatNanos(busy.p50), baseline: "alone: \(formatNanos(alone.p50))",
                               ratio: fixed(Double(busy.p50) / Double(max(1, alone.p50)), 1) + "x")
            context.report.add(section, "\(metric) p99 (n=\(grouped(busy.count)))",
                               value: formatNanos(busy.p99), baseline: "alone: \(formatNanos(alone.p99))",
                               ratio: fixed(Double(busy.p99) / Double(max(1, alone.p99)), 1) + "x",
                               target: "≤ 50 ms", met: busy.p99 <= 50_000_000)
        }
        // The p99 of a few hundred saves hides one that waited seconds for a merge.
        let slow = during.saves.values.filter { $0 > 50_000_000 }.count
        context.report.add(section, "\(storeName): another client's longest save → reply during the import "
                           + "(\(slow) of \(grouped(during.saves.count)) over 50 ms)",
                           value: formatNanos(during.saves.values.max() ?? 0))
    }

    /// `count` users as a JSON array, one per line, in a random (seeded) order.
    static func writeImportFile(_ path: String, count: Int) throws {
        guard let out = FileHandle(forWritingAtPath: path) ?? {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            return FileHandle(forWritingAtPath: path)
        }() else { throw BenchError("cannot create \(path)") }
        defer { try? out.close() }
        var random = SplitMix64(seed: 2026)  // seeded: every run imports the same file
        var text = "[\n"
        for index in 0..<count {
            let a = random.next(), b = random.next()
            let id = String(format: "%08X-%04X-4%03X-8%03X-%012llX", UInt32(truncatingIfNeeded: a >> 32),
                            UInt16(truncatingIfNeeded: a >> 16), UInt16(truncatingIfNeeded: a) & 0xFFF,
                            UInt16(truncatingIfNeeded: b >> 48) & 0xFFF, b & 0xFFFF_FFFF_FFFF)
            let first = firstNames[Int(random.next() % UInt64(firstNames.count))]
            let last = lastNames[Int(random.next() % UInt64(lastNames.count))]
            let email = "\(first.lowercased()).\(String(index, radix: 36))@bulk.example.com"
            text += "  {\"id\": \"\(id)\", \"name\": \"\(first) \(last)\", \"email\": \"\(email)\"}"
            text += index == count - 1 ? "\n]\n" : ",\n"
            if text.utf8.count > 1 << 20 {
                try out.write(contentsOf: Data(text.utf8))
                text = ""
            }
        }
        try out.write(contentsOf: Data(text.utf8))
    }

    static let firstNames = ["Ada", "Alan", "Grace", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Zoë", "Łukasz",
                             "Frances", "Edsger"]
    static let lastNames = ["Lovelace", "Turing", "Hopper", "Torvalds", "Hamilton", "Ritchie", "Liskov", "Thompson",
                            "Müller", "Dijkstra", "Allen", "Johnson"]

    /// The other client: its own session on the first user's detail screen.
    final class OtherClient {
        let connection: WireConnection
        private var turn = 0
        private var version: Int64 = 0

        init(_ socketPath: String) throws(BenchError) {
            connection = try WireConnection.connect(socketPath)
            connection.trackDocument = true
            try connection.attach(sessionKey: "bulk-other")
            try connection.awaitReply(connection.intent("list", "on_appear").id)
            guard let user = JSONValueBox(value: connection.document).firstUser else {
                throw BenchError("the list is empty")
            }
            try connection.awaitReply(connection.intent("session", "open_user", ["id": .string(user.id)]).id)
            connection.trackDocument = false  // the import's patches to its list are read and dropped
        }

        /// Alternating drafts and saves for `seconds`, each timed from intent to reply.
        func roundTrips(for seconds: Double) throws(BenchError) -> (drafts: Samples, saves: Samples) {
            var drafts = Samples(), saves = Samples()
            let until = deadline(seconds: seconds)
            repeat {
                turn += 1
                var start = monotonicNanos()
                try connection.awaitReply(connection.intent("detail", "set_draft_name",
                                                            ["name": .string("Bulk Other \(turn)")]).id)
                drafts.append(monotonicNanos() - start)
                start = monotonicNanos()
                try connection.awaitReply(connection.intent("detail", "save").id)
                saves.append(monotonicNanos() - start)
            } while monotonicNanos() < until
            return (drafts, saves)
        }
    }
}
