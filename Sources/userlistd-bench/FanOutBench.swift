import Foundation
import Glibc
import UserListWire

/// One session renames a user; N other sessions, each on its own connection, get the patch.
/// Measured: `save` sent → the last session's patch read (one epoll reader, or R of them on
/// threads of their own: `--readers`, FanOutReaders), against the raw floor (one frame of the
/// patch's size to N socketpairs) and Redis PUBLISH to N subscribers.
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
        guard remaining == 0 else {
            throw BenchError("\(what): \(remaining) of \(receivers) sessions got no patch within 10 s")
        }
        return (last, frameBytes)
    }

    static func run(_ context: BenchContext) {
        // 10,000 is reported (issue #15 asks for the figure, with no target).
        let sizes = context.quick ? [1, 100] : [1, 100, 1000, 10_000]
        let rounds = context.quick ? 10 : 50
        let readers = readerCounts(context)
        print("== fan-out (N = \(sizes.map(String.init).joined(separator: ", ")); \(rounds) rounds each; "
              + "sessions read by \(readers.map(String.init).joined(separator: ", then ")) threads)")
        for receivers in sizes {
            guard let primary = measureDaemon(context, receivers: receivers, rounds: rounds, readers: readers) else {
                continue
            }
            if receivers == 1000 { measureAfterAdd(context, primary, receivers: receivers, rounds: rounds) }
            compareWithRedis(context, primary, receivers: receivers, rounds: rounds, first: receivers == sizes.first)
        }
    }

    /// `--readers R`: R alone. By default 1 (the run compared with the floor and Redis, as the bench
    /// always measured) and then the machine's cores, on the same sessions of the same daemon.
    static func readerCounts(_ context: BenchContext) -> [Int] {
        if let readers = context.readers { return [readers] }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        return cores > 1 ? [1, cores] : [1]
    }

    /// " (4 reader threads)" in a figure's name; nothing for one.
    static func readersLabel(_ threads: Int) -> String { threads == 1 ? "" : " (\(threads) reader threads)" }

    /// The daemon's runs at N sessions, each against its floor (the first) or the first run (the
    /// others); returns the first, which the Redis and after-add figures compare with.
    static func measureDaemon(_ context: BenchContext, receivers: Int, rounds: Int, readers: [Int]) -> FanOutRun? {
        var primary: FanOutRun?
        context.withDaemon(section) { daemon throws(BenchError) in
            let runs = try measure(daemon, receivers: receivers, rounds: rounds, tag: "f\(receivers)", warmingUp: true,
                                   readers: readers)
            primary = runs[0]
            try reportAgainstFloor(context, runs[0], receivers: receivers, rounds: rounds)
            for run in runs.dropFirst() {
                context.report.latency(section, "N=\(grouped(receivers)): save → last patch read"
                                       + "\(readersLabel(run.readers)), vs the same read by \(runs[0].readers) thread"
                                       + (runs[0].readers == 1 ? "" : "s"),
                                       run.samples, baseline: runs[0].samples)
            }
        }
        return primary
    }

    /// The raw floor holds both ends of N socketpairs in this process: skipped with a note where
    /// the descriptor limit is too low for that.
    static func reportAgainstFloor(_ context: BenchContext, _ run: FanOutRun, receivers: Int,
                                   rounds: Int) throws(BenchError) {
        let bytes = run.patchBytes
        let metric = "N=\(grouped(receivers)): save → last patch read\(readersLabel(run.readers))"
        guard receivers * 2 + 1_000 <= openFileLimit() else {
            context.report.latency(section, "\(metric) (\(bytes) B)", run.samples, baseline: nil)
            context.report.note("fan-out: no socketpair floor at N=\(grouped(receivers)): it needs "
                                + "\(grouped(receivers * 2 + 1_000)) descriptors, "
                                + "RLIMIT_NOFILE is \(grouped(openFileLimit()))")
            return
        }
        let floor = try FanOutFloor.run(receivers: receivers, frameSize: bytes, rounds: rounds)
        context.report.latency(section, "\(metric), vs socketpair floor (\(bytes) B)",
                               run.samples, baseline: floor, p99Ratio: receivers == 1000 ? 1.3 : nil)
    }

    /// N = 1,000 again on a fresh daemon, after an add that cuts every list back to its page.
    static func measureAfterAdd(_ context: BenchContext, _ primary: FanOutRun, receivers: Int, rounds: Int) {
        context.withDaemon(section) { daemon throws(BenchError) in
            let afterAdd = try measure(daemon, receivers: receivers, rounds: rounds, tag: "fa\(receivers)",
                                       addingFirst: true, warmingUp: true, readers: [primary.readers])[0]
            context.report.latency(section, "N=1,000 after an add cut every list back to its page, "
                                   + "vs the same without the add", afterAdd.samples, baseline: primary.samples)
            reportCPU(context, "N=1,000 after that add: server CPU per session reached, vs without the add",
                      deliveries: receivers * rounds, cpu: afterAdd.cpu, baseline: primary.cpu)
        }
    }

    /// The same N against Redis PUBLISH (latency, first round, CPU), and at 1,000 a save's disk
    /// writes alone against it; a note instead when redis-server is not installed.
    static func compareWithRedis(_ context: BenchContext, _ primary: FanOutRun, receivers: Int, rounds: Int,
                                 first: Bool) {
        let bytes = primary.patchBytes
        do throws(BenchError) {
            guard let (redis, redisCPU, redisFirst) = try RedisFanOut.run(context, receivers: receivers,
                                                                          payloadSize: bytes, rounds: rounds) else {
                if first { context.report.note("fan-out: redis-server not installed; the Redis comparison is skipped") }
                return
            }
            context.report.latency(section, "N=\(grouped(receivers)): same, vs Redis PUBLISH → last subscriber read "
                                   + "(\(bytes) B payload)", primary.samples, baseline: redis)
            if let daemonFirst = primary.first {
                reportFirstRound(context, receivers: receivers, daemon: daemonFirst, redis: redisFirst)
            }
            if receivers == 1000 {
                let commit = try CommitFloor.run(directory: context.directory, rounds: rounds)
                context.report.latency(section, "a save's disk writes alone (\(CommitFloor.frames) WAL frames + "
                                       + "fdatasync), vs Redis PUBLISH to 1,000", commit, baseline: redis)
            }
            if receivers >= 100 {
                reportCPU(context, "N=\(grouped(receivers)): server CPU per session reached, vs Redis per subscriber",
                          deliveries: receivers * rounds, cpu: primary.cpu, baseline: redisCPU)
            }
        } catch {
            context.report.failed(section, "Redis N=\(receivers)", error)
        }
    }

    /// The warm-up rounds, kept out of the samples above: the daemon's first save since it
    /// started, which also seats the sessions in their loops' shared views, against Redis's first
    /// PUBLISH. One sample each, so shown rather than hidden, not compared as percentiles.
    static func reportFirstRound(_ context: BenchContext, receivers: Int, daemon: UInt64, redis: UInt64) {
        let ratio = redis > 0 ? fixed(Double(daemon) / Double(redis), 2) + "x" : "–"
        context.report.add(section, "N=\(grouped(receivers)): the warm-up round (first save since start), "
                           + "vs Redis's first PUBLISH",
                           value: formatNanos(daemon), baseline: formatNanos(redis), ratio: ratio)
    }

    /// What each delivery cost the server's CPU, all threads, against `baseline` divided the same
    /// way: the daemon's whole rounds (the writer's draft and save, the commit, every session's
    /// patch and `changed` event) against Redis's (one PUBLISH to every subscriber), or against
    /// the daemon's own rounds of another run.
    static func reportCPU(_ context: BenchContext, _ metric: String, deliveries: Int, cpu: UInt64?,
                          baseline: UInt64?) {
        guard let cpu, let baseline, deliveries > 0 else { return }
        let count = UInt64(deliveries)
        let ratio = baseline > 0 ? fixed(Double(cpu) / Double(baseline), 2) + "x" : "–"
        context.report.add(section, metric, value: formatNanos(cpu / count), baseline: formatNanos(baseline / count),
                           ratio: ratio)
    }
}
