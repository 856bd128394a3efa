import Glibc
import UserListWire

/// One session renames a user; N other sessions, each on its own connection, get the patch.
/// Measured: `save` sent → the last session's patch read (one epoll reader), against the raw
/// floor (one frame of the patch's size to N socketpairs) and Redis PUBLISH to N subscribers.
enum FanOutBench {
    static func openFileLimit() -> Int {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return Int(limit.rlim_cur)
    }

    static let section = "fan-out"

    /// Reads until every one of `receivers` sessions has a patch containing `needle` (10 s at
    /// most); returns when the last was read and the size of a patch frame.
    static func awaitPatches(_ set: ConnectionSet, containing needle: [UInt8], receivers: Int,
                             what: String) throws(BenchError) -> (last: UInt64, frameBytes: Int) {
        var seen = [Bool](repeating: false, count: receivers)
        var remaining = receivers
        var last: UInt64 = 0
        var frameBytes = 0
        let until = deadline(seconds: 10)
        while remaining > 0 && monotonicNanos() < until {
            set.pump(timeoutMillis: 50) { index, frame, at in
                guard !seen[index], frameType(frame) == "patch", contains(frame, needle) else { return }
                seen[index] = true
                remaining -= 1
                last = max(last, at)
                frameBytes = frame.count + FrameLimits.headerSize
            }
        }
        guard remaining == 0 else { throw BenchError("\(what): \(remaining) of \(receivers) sessions got no patch within 10 s") }
        return (last, frameBytes)
    }

    static func run(_ context: BenchContext) {
        // 10,000 is reported (issue #15 asks for the figure, with no target).
        let sizes = context.quick ? [1, 100] : [1, 100, 1000, 10_000]
        let rounds = context.quick ? 10 : 50
        print("== fan-out (N = \(sizes.map(String.init).joined(separator: ", ")); \(rounds) rounds each)")
        for receivers in sizes {
            var daemonSamples: Samples?
            var patchBytes = 0
            var daemonCPU: UInt64?
            var daemonFirst: UInt64?
            context.withDaemon(section) { daemon throws(BenchError) in
                let (samples, bytes, cpu, first) = try measure(daemon, receivers: receivers, rounds: rounds, tag: "f\(receivers)", warmingUp: true)
                daemonCPU = cpu
                daemonFirst = first
                daemonSamples = samples
                patchBytes = bytes
                // The floor holds both ends of N socketpairs in this process.
                guard receivers * 2 + 1_000 <= openFileLimit() else {
                    context.report.latency(section, "N=\(grouped(receivers)): save → last patch read (\(bytes) B)", samples, baseline: nil)
                    context.report.note("fan-out: no socketpair floor at N=\(grouped(receivers)): it needs \(grouped(receivers * 2 + 1_000)) descriptors, RLIMIT_NOFILE is \(grouped(openFileLimit()))")
                    return
                }
                let floor = try FanOutFloor.run(receivers: receivers, frameSize: bytes, rounds: rounds)
                context.report.latency(section, "N=\(grouped(receivers)): save → last patch read, vs socketpair floor (\(bytes) B)",
                                       samples, baseline: floor, p99Ratio: receivers == 1000 ? 1.3 : nil)
            }
            if receivers == 1000, let daemonSamples {
                context.withDaemon(section) { daemon throws(BenchError) in
                    let (afterAdd, _, cpu, _) = try measure(daemon, receivers: receivers, rounds: rounds, tag: "fa\(receivers)",
                                                            addingFirst: true, warmingUp: true)
                    context.report.latency(section, "N=1,000 after an add cut every list back to its page, vs the same without the add",
                                           afterAdd, baseline: daemonSamples)
                    reportCPU(context, "N=1,000 after that add: server CPU per session reached, vs without the add",
                              deliveries: receivers * rounds, cpu: cpu, baseline: daemonCPU)
                }
            }
            guard let daemonSamples else { continue }
            do throws(BenchError) {
                if let (redis, redisCPU, redisFirst) = try RedisFanOut.run(context, receivers: receivers, payloadSize: patchBytes, rounds: rounds) {
                    context.report.latency(section, "N=\(grouped(receivers)): same, vs Redis PUBLISH → last subscriber read (\(patchBytes) B payload)",
                                           daemonSamples, baseline: redis)
                    if let daemonFirst {
                        reportFirstRound(context, receivers: receivers, daemon: daemonFirst, redis: redisFirst)
                    }
                    if receivers == 1000 {
                        let commit = try CommitFloor.run(directory: context.directory, rounds: rounds)
                        context.report.latency(section, "a save's disk writes alone (\(CommitFloor.frames) WAL frames + fdatasync), vs Redis PUBLISH to 1,000",
                                               commit, baseline: redis)
                    }
                    if receivers >= 100 {
                        reportCPU(context, "N=\(grouped(receivers)): server CPU per session reached, vs Redis per subscriber",
                                  deliveries: receivers * rounds, cpu: daemonCPU, baseline: redisCPU)
                    }
                } else if receivers == sizes.first {
                    context.report.note("fan-out: redis-server not installed; the Redis comparison is skipped")
                }
            } catch {
                context.report.failed(section, "Redis N=\(receivers)", error)
            }
        }
    }

    /// The warm-up rounds, kept out of the samples above: the daemon's first save since it
    /// started, which also seats the sessions in their loops' shared views, against Redis's first
    /// PUBLISH. One sample each, so shown rather than hidden, not compared as percentiles.
    static func reportFirstRound(_ context: BenchContext, receivers: Int, daemon: UInt64, redis: UInt64) {
        let ratio = redis > 0 ? fixed(Double(daemon) / Double(redis), 2) + "x" : "–"
        context.report.add(section, "N=\(grouped(receivers)): the warm-up round (first save since start), vs Redis's first PUBLISH",
                           value: formatNanos(daemon), baseline: formatNanos(redis), ratio: ratio)
    }

    /// What each delivery cost the server's CPU, all threads, against `baseline` divided the same
    /// way: the daemon's whole rounds (the writer's draft and save, the commit, every session's
    /// patch and `changed` event) against Redis's (one PUBLISH to every subscriber), or against
    /// the daemon's own rounds of another run.
    static func reportCPU(_ context: BenchContext, _ metric: String, deliveries: Int, cpu: UInt64?, baseline: UInt64?) {
        guard let cpu, let baseline, deliveries > 0 else { return }
        let count = UInt64(deliveries)
        let ratio = baseline > 0 ? fixed(Double(cpu) / Double(baseline), 2) + "x" : "–"
        context.report.add(section, metric, value: formatNanos(cpu / count), baseline: formatNanos(baseline / count), ratio: ratio)
    }

    /// Rounds of rename-and-wait; returns the samples, the size of an observer's patch frame, and
    /// the CPU time the daemon's threads spent over the rounds (not over opening the sessions).
    /// The observing sessions are on `observers` when given (another daemon on the same store).
    /// `addingFirst`: before the rounds, the writer adds a user at the top of the first page, which
    /// grows every session's list past its page and so cuts it back (and moves its cursor).
    /// `warmingUp`: one more round first, kept out of the samples and the CPU and returned as
    /// `first` (the daemon's first save, and the change that seats the sessions in shared views).
    static func measure(_ daemon: DaemonProcess, receivers: Int, rounds: Int, tag: String, observers: DaemonProcess? = nil,
                        addingFirst: Bool = false, warmingUp: Bool = false) throws(BenchError) -> (Samples, Int, cpu: UInt64?, first: UInt64?) {
        let writer = try WireConnection.connect(daemon.socketPath)
        writer.trackDocument = true
        try writer.attach(sessionKey: "\(tag)-writer")
        try writer.awaitReply(writer.intent("list", "on_appear").id)
        guard let user = JSONValueBox(value: writer.document).firstUser else { throw BenchError("the list is empty") }
        try writer.awaitReply(writer.intent("session", "open_user", ["id": .string(user.id)]).id)
        writer.trackDocument = false

        let sessions = try ManySessions.open(socketPath: (observers ?? daemon).socketPath, count: receivers, keyPrefix: tag)
        let set = sessions.connections
        if addingFirst {
            let name = "Aaaa Added \(tag)"
            let add = try writer.intent("session", "add_user", ["name": .string(name), "email": .string("\(tag)@bench.example")])
            _ = try awaitPatches(set, containing: Array(name.utf8), receivers: receivers, what: "the add")
            try writer.awaitReply(add.id)
        }
        var samples = Samples()
        var patchBytes = 0
        var first: UInt64?
        var cpuBefore = ProcessCPU.nanoseconds(pid: daemon.pid)
        for round in (warmingUp ? -1 : 0)..<rounds {
            let marker = "\(tag)r\(round)"
            try writer.awaitReply(writer.intent("detail", "set_draft_name", ["name": .string("Aaaa Bench \(marker)")]).id)
            while set.pump(timeoutMillis: 0, { _, _, _ in }) > 0 {}  // trailing events of the last round
            let start = monotonicNanos()
            let save = try writer.intent("detail", "save")
            let (last, bytes) = try awaitPatches(set, containing: Array("\(marker)\"".utf8), receivers: receivers, what: "round \(round)")
            if patchBytes == 0 { patchBytes = bytes }
            try writer.awaitReply(save.id)
            if round < 0 {
                first = last - start
                cpuBefore = ProcessCPU.nanoseconds(pid: daemon.pid)
            } else {
                samples.append(last - start)
            }
        }
        let cpu = ProcessCPU.nanoseconds(pid: daemon.pid).flatMap { after in cpuBefore.map { after - $0 } }
        return (samples, patchBytes, cpu, first)
    }
}
