import Foundation
import Glibc
import Synchronization
import UserListWire

/// A restart under load that no client should notice: S attached sessions (one connection each)
/// and a writer renaming a user 10 times a second (every rename reaches every session as a
/// patch); two seconds in, the daemon is told to restart with SIGUSR2 (it re-executes itself and
/// hands every connection to the new image: the same handover as `systemctl restart` through
/// systemd's descriptor store). Counted: connections closed, new handshakes (snapshots, goodbyes)
/// after the start, renames that did not reach every session, and the stall: save → each
/// session's patch for the renames sent around the restart.
enum RestartBench {
    static let section = "restart"

    static func run(_ context: BenchContext) {
        let sessions = context.quick ? 200 : 1000
        let seconds = 6
        let renames = seconds * 10
        let restartAt = 20  // the rename after which SIGUSR2 is sent (2 s in)
        print("== restart (\(sessions) attached sessions, 10 renames/s, SIGUSR2 after \(restartAt / 10) s)")
        // Notice level: the daemon's own account of the handover goes into the notes.
        context.withDaemon(section, extraFlags: ["--log-level", "notice"]) { daemon throws(BenchError) in
            let writer = try SustainedBench.openWriter(daemon, key: "restart-writer")
            let many = try ManySessions.open(socketPath: daemon.socketPath, count: sessions, keyPrefix: "restart")
            let set = many.connections

            let sentAt = Mutex([UInt64](repeating: 0, count: renames))
            let signalledAt = Atomic<UInt64>(0)
            let finished = Atomic<Bool>(false)
            let failure = Mutex<String?>(nil)
            let sent = Atomic<Int>(0)
            let box = SustainedBench.WriterBox(writer)
            let pid = daemon.pid
            let start = monotonicNanos()
            let thread = BenchThread(name: "restart-writer") {
                defer { finished.store(true, ordering: .releasing) }
                let client = box.connection
                do throws(BenchError) {
                    for k in 0..<renames {
                        let tick = start + UInt64(k) * 100_000_000
                        let now = monotonicNanos()
                        if tick > now { usleep(UInt32((tick - now) / 1000)) }
                        if k == restartAt {
                            signalledAt.store(monotonicNanos(), ordering: .relaxed)
                            kill(pid, SIGUSR2)
                        }
                        try client.awaitReply(client.intent("detail", "set_draft_name", ["name": .string("Aaaa Restart s\(k)")]).id, seconds: 30)
                        sentAt.withLock { $0[k] = monotonicNanos() }
                        try client.awaitReply(client.intent("detail", "save").id, seconds: 30)
                        sent.add(1, ordering: .relaxed)
                    }
                } catch {
                    failure.withLock { $0 = "writer: \(error)" }
                }
            }
            var delivered = [Int](repeating: 0, count: sessions)
            var lastSeen = [Int](repeating: -1, count: sessions)
            var around = Samples()  // renames sent from 0.5 s before the signal to 2 s after
            var all = Samples()
            var handshakes = 0
            let marker = Array("Aaaa Restart s".utf8)
            var graceUntil: UInt64 = .max
            let hardStop = deadline(seconds: Double(seconds) + 60)
            while monotonicNanos() < min(graceUntil, hardStop) {
                set.pump(timeoutMillis: 50) { index, frame, at in
                    let type = frameType(frame)
                    if type == "snapshot" || type == "welcome" || type == "goodbye" { handshakes += 1; return }
                    guard type == "patch", let k = SustainedBench.renameNumber(frame, after: marker), k < renames else { return }
                    let sent = sentAt.withLock { $0[k] }
                    guard sent > 0, at >= sent else { return }
                    delivered[index] += 1
                    lastSeen[index] = max(lastSeen[index], k)
                    all.append(at - sent)
                    // The stall counts from when the rename was due, not from when the writer
                    // (itself a client being handed over) got to send it.
                    let due = start + UInt64(k) * 100_000_000
                    let signal = signalledAt.load(ordering: .relaxed)
                    if signal > 0, due + 500_000_000 >= signal, due <= signal + 2_000_000_000, at >= due { around.append(at - due) }
                }
                if graceUntil == .max && finished.load(ordering: .acquiring) { graceUntil = deadline(seconds: 2) }
            }
            thread.join(timeout: 10)
            if let problem = failure.withLock({ $0 }) { throw BenchError(problem) }
            let completed = sent.load(ordering: .relaxed)
            // Renames made while a restored list reloads reach the client inside the reload's
            // patch (coalesced, as any flush coalesces): the last rename is what every client must see.
            let missing = lastSeen.filter { $0 < completed - 1 }.count
            let coalesced = delivered.filter { $0 < completed }.count
            let report = context.report
            report.add(section, "\(grouped(sessions)) attached clients: connections closed by the restart",
                       value: "\(set.closedCount)", target: "0", met: set.closedCount == 0)
            report.add(section, "new snapshots, welcomes or goodbyes after the restart", value: "\(handshakes)",
                       target: "0 (same epoch)", met: handshakes == 0)
            report.add(section, "clients whose next patches stopped (the last of \(completed) renames, 4 s after the restart, not seen)",
                       value: "\(missing)", target: "0", met: missing == 0 && completed == renames)
            report.note("restart: \(coalesced) of \(sessions) clients got some renames made during the restart coalesced into their list's reload patch")
            report.latency(section, "stall: rename due → each client's patch, renames due from 0.5 s before to 2 s after SIGUSR2", around, baseline: nil, p99Limit: 100_000_000)
            report.latency(section, "save → each client's patch, whole run", all, baseline: nil)
            let log = (try? String(contentsOfFile: daemon.logPath, encoding: .utf8)) ?? ""
            for line in log.split(separator: "\n") where ["Handover", "Restarting", "Took over", "ready", "Upgrading"].contains(where: { line.contains($0) }) {
                report.note("restart: daemon: \(line.suffix(220))")
            }
        }
    }
}
