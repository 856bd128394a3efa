import Foundation
import Glibc
import Synchronization
import UserListWire

/// Fairness between uids: another uid's round trip and connect time, alone and while one uid
/// floods the daemon with intents or with connects. The flood runs as a child process of this
/// bench under uid `nobody` (`setpriv`), so the daemon sees two uids; it needs root and is
/// skipped with a note otherwise. The daemon runs with its default per-uid share
/// (`intents-per-second-per-uid`), the per-client limit lifted so the flood is not cut there.
enum FairnessBench {
    static let section = "fairness"

    static func run(_ context: BenchContext) {
        let report = context.report
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            report.note("fairness: skipped (needs root and setpriv to run the flood as another uid)")
            return
        }
        let samples = context.quick ? 300 : 2000
        let floodSeconds = context.quick ? 6 : 20
        print("== fairness (\(samples) round trips alone and under each flood from uid nobody)")
        let limits = ["--intents-per-second-per-uid", "2000", "--connections-per-second-per-uid", "500"]
        context.withDaemon(section, extraFlags: limits) { daemon throws(BenchError) in
            // The flood runs as nobody: let it reach the socket.
            chmod(context.directory, 0o755)
            chmod(daemon.socketPath, 0o666)
            let victim = try WireConnection.connect(daemon.socketPath)
            try victim.attach(sessionKey: "bench-fairness-victim")
            // Rounds alternate alone / under the flood, so drift on a shared machine hits both sides.
            let rounds = 4
            let connectCount = min(samples / 4, 300) / rounds
            var alone = Samples(), underIntents = Samples(), underConnects = Samples()
            var connectAlone = Samples(), connectUnder = Samples()
            var floodSent: [String] = [], connectsMade: [String] = []
            for _ in 0..<rounds {
                alone.append(contentsOf: try roundTrips(victim, count: samples / rounds))
                let intentFlood = try Flood(context: context, mode: "intents", socket: daemon.socketPath,
                                            seconds: floodSeconds)
                underIntents.append(contentsOf: try roundTrips(victim, count: samples / rounds))
                floodSent.append(intentFlood.finish())

                connectAlone.append(contentsOf: try connects(daemon.socketPath, count: connectCount))
                let connectFlood = try Flood(context: context, mode: "connects", socket: daemon.socketPath,
                                             seconds: floodSeconds)
                connectUnder.append(contentsOf: try connects(daemon.socketPath, count: connectCount))
                underConnects.append(contentsOf: try roundTrips(victim, count: samples / rounds))
                connectsMade.append(connectFlood.finish())
            }
            report.note("fairness: \(rounds) rounds; intent floods from uid nobody: "
                        + "\(floodSent.joined(separator: "; ")); "
                        + "connect floods: \(connectsMade.joined(separator: "; "))")
            let ratio = Double(underIntents.p50) / Double(max(1, alone.p50))
            report.add(section, "other uid's round trip p50 under an intent flood",
                       value: formatNanos(underIntents.p50), baseline: formatNanos(alone.p50) + " alone",
                       ratio: fixed(ratio, 2) + "x", target: "≤ 2x", met: ratio <= 2)
            report.add(section, "other uid's round trip p99 under an intent flood",
                       value: formatNanos(underIntents.p99), baseline: formatNanos(alone.p99) + " alone",
                       ratio: fixed(Double(underIntents.p99) / Double(max(1, alone.p99)), 2) + "x")
            let stormRatio = Double(underConnects.p50) / Double(max(1, alone.p50))
            report.add(section, "other uid's round trip p50 under a connect storm",
                       value: formatNanos(underConnects.p50), baseline: formatNanos(alone.p50) + " alone",
                       ratio: fixed(stormRatio, 2) + "x", target: "≤ 2x", met: stormRatio <= 2)
            let connectRatio = Double(connectUnder.p50) / Double(max(1, connectAlone.p50))
            report.add(section, "other uid's new connection → welcome p50 under a connect storm",
                       value: formatNanos(connectUnder.p50), baseline: formatNanos(connectAlone.p50) + " alone",
                       ratio: fixed(connectRatio, 2) + "x")
        }
    }

    /// `dismiss_error` → its reply: the cheapest intent, so the figure is the daemon's queueing.
    static func roundTrips(_ client: WireConnection, count: Int) throws(BenchError) -> Samples {
        var samples = Samples()
        for _ in 0..<count {
            let start = monotonicNanos()
            let sent = try client.intent("list", "dismiss_error")
            let (_, at) = try client.awaitReply(sent.id, seconds: 30)
            samples.append(at - start)
        }
        return samples
    }

    /// A fresh connection → its welcome, each on its own session key; paced at 200 a second, under
    /// the daemon's per-uid connect share (500 a second), so the victim is never refused itself.
    static func connects(_ path: String, count: Int) throws(BenchError) -> Samples {
        var samples = Samples()
        for index in 0..<count {
            sleepMillis(5)
            let start = monotonicNanos()
            let client = try WireConnection.connect(path)
            try client.hello(sessionKey: "bench-fairness-connect-\(index % 8)")
            let until = deadline(seconds: 30)
            while true {
                let (message, _, at) = try client.readMessage(until: until)
                if case .welcome = message { samples.append(at - start); break }
            }
        }
        return samples
    }

    /// This bench binary re-run as uid nobody in flood mode (`--flood MODE SOCKET SECONDS`).
    final class Flood {
        let process: Process
        let output = Pipe()

        init(context: BenchContext, mode: String, socket: String, seconds: Int) throws(BenchError) {
            process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=nobody", "--regid=nogroup", "--clear-groups",
                                 context.binDirectory + "/userlistd-bench", "--flood", mode, socket, String(seconds)]
            process.standardOutput = output
            process.standardError = output
            do { try process.run() } catch { throw BenchError("cannot start the flood: \(error)") }
            sleepMillis(500)  // pacing: let the flood reach full speed before measuring
        }

        /// Stops the flood and returns what it reported.
        func finish() -> String {
            kill(process.processIdentifier, SIGTERM)
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}

/// The flood itself, run in the child: as many intents or connects as it can for `seconds`
/// (or until SIGTERM), on 16 threads; prints a one-line summary.
enum FloodMode {
    static let stopRequested = Atomic<Bool>(false)
    static let total = Atomic<Int>(0)
    static let failures = Atomic<Int>(0)

    static func run(mode: String, socket: String, seconds: Double) -> Never {
        let started = monotonicNanos()
        let stop = deadline(seconds: seconds)
        signal(SIGTERM) { _ in FloodMode.stopRequested.store(true, ordering: .relaxed) }
        let threads = (0..<16).map { index in
            BenchThread(name: "flood-\(index)") {
                var connection: WireConnection?
                while monotonicNanos() < stop && !FloodMode.stopRequested.load(ordering: .relaxed) {
                    do throws(BenchError) {
                        if mode == "connects" {
                            let fd = try Sockets.connect(socket)
                            close(fd)
                            FloodMode.total.add(1, ordering: .relaxed)
                            continue
                        }
                        if connection == nil {
                            let fresh = try WireConnection.connect(socket)
                            try fresh.attach(sessionKey: "flood-\(index)")
                            connection = fresh
                        }
                        // Pipelined: 32 intents, then their replies.
                        var last = 0
                        for _ in 0..<32 { last = try connection!.intent("list", "dismiss_error").id }
                        try connection!.awaitReply(last, seconds: 30)
                        FloodMode.total.add(32, ordering: .relaxed)
                    } catch {
                        FloodMode.failures.add(1, ordering: .relaxed)
                        connection = nil
                        sleepMillis(10)  // refused (e.g. over the uid's connect share): retry, not a storm
                    }
                }
            }
        }
        for thread in threads { thread.join(timeout: seconds + 60) }
        let elapsed = fixed(Double(monotonicNanos() - started) / 1e9, 1)
        let failed = failures.load(ordering: .relaxed)
        print("\(total.load(ordering: .relaxed)) \(mode) in \(elapsed) s, \(failed) failures")
        exit(0)
    }
}
