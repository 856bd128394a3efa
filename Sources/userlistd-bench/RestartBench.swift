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

    /// What the reader gathers per session and over the run.
    struct Reads {
        var delivered: [Int]
        var lastSeen: [Int]
        var around = Samples()  // renames due from 0.5 s before the signal to 2 s after
        var all = Samples()
        var handshakes = 0

        init(sessions: Int) {
            delivered = [Int](repeating: 0, count: sessions)
            lastSeen = [Int](repeating: -1, count: sessions)
        }
    }

    static func run(_ context: BenchContext) {
        let sessions = context.quick ? 200 : 1000
        let seconds = 6
        let restartAt = 20  // the rename after which SIGUSR2 is sent (2 s in)
        print("== restart (\(sessions) attached sessions, 10 renames/s, SIGUSR2 after \(restartAt / 10) s)")
        // Notice level: the daemon's own account of the handover goes into the notes.
        context.withDaemon(section, extraFlags: ["--log-level", "notice"]) { daemon throws(BenchError) in
            let writer = try SustainedBench.openWriter(daemon, key: "restart-writer")
            let many = try ManySessions.open(socketPath: daemon.socketPath, count: sessions, keyPrefix: "restart")
            let signalledAt = Atomic<UInt64>(0)
            let pid = daemon.pid
            let pacer = PacedWriter(renames: seconds * 10, interval: 100_000_000)
            let thread = pacer.run(SustainedBench.WriterBox(writer), name: "restart-writer",
                                   prefix: "Aaaa Restart s") { k in
                guard k == restartAt else { return }
                signalledAt.store(monotonicNanos(), ordering: .relaxed)
                kill(pid, SIGUSR2)
            }
            let reads = readPatches(many.connections, pacer, sessions: sessions, seconds: Double(seconds) + 60) {
                signalledAt.load(ordering: .relaxed)
            }
            thread.join(timeout: 10)
            if let problem = pacer.failureMessage { throw BenchError(problem) }
            report(context, reads, pacer, closed: many.connections.closedCount, sessions: sessions)
            let log = (try? String(contentsOfFile: daemon.logPath, encoding: .utf8)) ?? ""
            let handover = ["Handover", "Restarting", "Took over", "ready", "Upgrading"]
            for line in log.split(separator: "\n") where handover.contains(where: { line.contains($0) }) {
                context.report.note("restart: daemon: \(line.suffix(220))")
            }
        }
    }

    /// Every frame until the writer is done: handshakes counted, each rename's patch timed.
    static func readPatches(_ set: ConnectionSet, _ pacer: PacedWriter, sessions: Int, seconds: Double,
                            signalledAt: () -> UInt64) -> Reads {
        var reads = Reads(sessions: sessions)
        let marker = Array("Aaaa Restart s".utf8)
        pacer.readUntilFinished(set, seconds: seconds) { index, frame, at in
            let type = frameType(frame)
            if type == "snapshot" || type == "welcome" || type == "goodbye" { reads.handshakes += 1; return }
            guard type == "patch", let k = SustainedBench.renameNumber(frame, after: marker), k < pacer.renames else {
                return
            }
            let sent = pacer.sent(k)
            guard sent > 0, at >= sent else { return }
            reads.delivered[index] += 1
            reads.lastSeen[index] = max(reads.lastSeen[index], k)
            reads.all.append(at - sent)
            // The stall counts from when the rename was due, not from when the writer
            // (itself a client being handed over) got to send it.
            let due = pacer.start + UInt64(k) * pacer.interval
            let signal = signalledAt()
            if signal > 0, due + 500_000_000 >= signal, due <= signal + 2_000_000_000, at >= due {
                reads.around.append(at - due)
            }
        }
        return reads
    }

    static func report(_ context: BenchContext, _ reads: Reads, _ pacer: PacedWriter, closed: Int, sessions: Int) {
        let completed = pacer.completed
        // Renames made while a restored list reloads reach the client inside the reload's
        // patch (coalesced, as any flush coalesces): the last rename is what every client must see.
        let missing = reads.lastSeen.filter { $0 < completed - 1 }.count
        let coalesced = reads.delivered.filter { $0 < completed }.count
        let report = context.report
        report.add(section, "\(grouped(sessions)) attached clients: connections closed by the restart",
                   value: "\(closed)", target: "0", met: closed == 0)
        report.add(section, "new snapshots, welcomes or goodbyes after the restart", value: "\(reads.handshakes)",
                   target: "0 (same epoch)", met: reads.handshakes == 0)
        report.add(section, "clients whose next patches stopped "
                   + "(the last of \(completed) renames, 4 s after the restart, not seen)",
                   value: "\(missing)", target: "0", met: missing == 0 && completed == pacer.renames)
        report.note("restart: \(coalesced) of \(sessions) clients got some renames made during the restart "
                    + "coalesced into their list's reload patch")
        report.latency(section, "stall: rename due → each client's patch, renames due from 0.5 s before to 2 s "
                       + "after SIGUSR2", reads.around, baseline: nil, p99Limit: 100_000_000)
        report.latency(section, "save → each client's patch, whole run", reads.all, baseline: nil)
    }
}
