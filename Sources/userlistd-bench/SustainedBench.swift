import Glibc
import Synchronization
import UserListWire

/// S sessions each receiving ~10 updates/s: one writer session renames a user 10 times a second
/// (each rename fans out to every session) for a fixed time; one epoll reader takes every patch
/// and measures save sent → that session's patch read.
enum SustainedBench {
    static let section = "sustained"

    /// Hands the writer's connection to its thread. Invariant: after `init`, only the writer thread
    /// touches `connection`, and the main thread waits for it to finish before leaving.
    final class WriterBox: @unchecked Sendable {
        let connection: WireConnection
        init(_ connection: WireConnection) { self.connection = connection }
    }

    /// `extraFlags` and `label` let the journal section run it again with the journal off.
    /// Returns the latencies measured (nil when the run failed).
    @discardableResult
    static func run(_ context: BenchContext, extraFlags: [String] = [], label: String = "",
                    sessions requested: Int? = nil, perSecond: Int = 10) -> Samples? {
        let section = Self.section + label
        let sessions = requested ?? (context.quick ? 100 : 1000)
        let seconds = context.quick ? 5 : 30
        let renames = seconds * perSecond
        let interval = UInt64(1_000_000_000 / perSecond)
        var measured: Samples?
        print("== \(section) (\(sessions) sessions, \(perSecond) renames/s for \(seconds) s)")
        context.withDaemon(section, extraFlags: extraFlags) { daemon throws(BenchError) in
            let writer = try openWriter(daemon, key: "sustained-writer")
            let many = try ManySessions.open(socketPath: daemon.socketPath, count: sessions, keyPrefix: "sustained")
            let set = many.connections

            let sentAt = Mutex([UInt64](repeating: 0, count: renames))
            let finished = Atomic<Bool>(false)
            let failure = Mutex<String?>(nil)
            let sent = Atomic<Int>(0)
            let box = WriterBox(writer)
            let start = monotonicNanos()
            let thread = BenchThread(name: "sustained-writer") {
                defer { finished.store(true, ordering: .releasing) }
                let client = box.connection
                do throws(BenchError) {
                    for k in 0..<renames {
                        let tick = start + UInt64(k) * interval
                        let now = monotonicNanos()
                        if tick > now { usleep(UInt32((tick - now) / 1000)) }
                        try client.awaitReply(client.intent("detail", "set_draft_name", ["name": .string("Aaaa Bench s\(k)")]).id, seconds: 30)
                        sentAt.withLock { $0[k] = monotonicNanos() }
                        try client.awaitReply(client.intent("detail", "save").id, seconds: 30)
                        sent.add(1, ordering: .relaxed)
                    }
                } catch {
                    failure.withLock { $0 = "writer: \(error)" }
                }
            }
            var latencies = Samples()
            var delivered = 0
            var lastReceipt: UInt64 = 0
            // Per rename: when its first and its last session's patch was read.
            var firstRead = [UInt64](repeating: .max, count: renames)
            var lastRead = [UInt64](repeating: 0, count: renames)
            let marker = Array("Aaaa Bench s".utf8)
            var graceUntil: UInt64 = .max
            let hardStop = deadline(seconds: Double(seconds) + 90)
            while monotonicNanos() < min(graceUntil, hardStop) {
                set.pump(timeoutMillis: 50) { _, frame, at in
                    guard frameType(frame) == "patch", let k = renameNumber(frame, after: marker), k < renames else { return }
                    let sent = sentAt.withLock { $0[k] }
                    guard sent > 0, at >= sent else { return }
                    latencies.append(at - sent)
                    firstRead[k] = min(firstRead[k], at)
                    lastRead[k] = max(lastRead[k], at)
                    delivered += 1
                    lastReceipt = max(lastReceipt, at)
                }
                if graceUntil == .max && finished.load(ordering: .acquiring) { graceUntil = deadline(seconds: 2) }
            }
            thread.join(timeout: 10)
            if let problem = failure.withLock({ $0 }) { throw BenchError(problem) }
            let completed = sent.load(ordering: .relaxed)
            if completed < renames {
                context.report.note("sustained: the writer completed only \(completed) of \(renames) renames on the 10/s schedule")
            }
            let expected = completed * sessions
            let elapsed = Double(max(1, lastReceipt - start)) / 1e9
            context.report.add(section, "\(grouped(sessions)) sessions × \(perSecond) renames/s, \(seconds) s: patches delivered",
                               value: "\(grouped(delivered)) of \(grouped(expected)) (\(grouped(Int(Double(delivered) / elapsed)))/s)",
                               target: "all, \(grouped(sessions * perSecond))/s", met: delivered == expected)
            // The target is for 1,000 sessions × 10/s; other shapes are reported.
            let targeted = sessions == 1000 && perSecond == 10
            context.report.latency(section, "\(grouped(sessions)) × \(perSecond)/s: save sent → each session's patch", latencies,
                                   baseline: nil, p99Limit: targeted ? 10_000_000 : nil)
            // Where a patch's time goes: the commit and the hops to the first session read, then
            // the fan-out to the last (each rename once).
            let sends = sentAt.withLock { $0 }
            var toFirst = Samples()
            var spread = Samples()
            for k in 0..<renames where sends[k] > 0 && lastRead[k] > 0 {
                toFirst.append(firstRead[k] - sends[k])
                spread.append(lastRead[k] - firstRead[k])
            }
            context.report.latency(section, "\(grouped(sessions)) × \(perSecond)/s: save sent → the first session's patch (commit), per rename",
                                   toFirst, baseline: nil)
            context.report.latency(section, "\(grouped(sessions)) × \(perSecond)/s: first → last session's patch (fan-out), per rename",
                                   spread, baseline: nil)
            if set.closedCount > 0 { context.report.note("sustained: the daemon closed \(set.closedCount) session connections") }
            measured = latencies
        }
        return measured
    }

    /// The k in `...Aaaa Bench s<k>"` inside a frame.
    static func renameNumber(_ frame: [UInt8], after marker: [UInt8]) -> Int? {
        guard frame.count > marker.count else { return nil }
        var index = 0
        let last = frame.count - marker.count
        while index < last {
            if frame[index] == marker[0] && frame[index..<(index + marker.count)].elementsEqual(marker) {
                var cursor = index + marker.count
                var value = 0
                var digits = 0
                while cursor < frame.count, frame[cursor] >= 48, frame[cursor] <= 57 {
                    value = value * 10 + Int(frame[cursor] - 48)
                    cursor += 1
                    digits += 1
                }
                if digits > 0 && cursor < frame.count && frame[cursor] == UInt8(ascii: "\"") { return value }
            }
            index += 1
        }
        return nil
    }

    /// A session with the first user's detail screen open, ready to rename it.
    static func openWriter(_ daemon: DaemonProcess, key: String) throws(BenchError) -> WireConnection {
        let writer = try WireConnection.connect(daemon.socketPath)
        writer.trackDocument = true
        try writer.attach(sessionKey: key)
        try writer.awaitReply(writer.intent("list", "on_appear").id)
        guard let user = JSONValueBox(value: writer.document).firstUser else { throw BenchError("the list is empty") }
        try writer.awaitReply(writer.intent("session", "open_user", ["id": .string(user.id)]).id)
        writer.trackDocument = false
        return writer
    }
}
