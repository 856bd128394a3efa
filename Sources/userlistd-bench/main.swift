// userlistd-bench: starts a real userlistd and measures it against raw baselines taken in the same
// run. See BENCHMARKS.md for what each figure means and scripts/bench.sh to build and run it.
import Foundation
import Glibc

let arguments = Array(CommandLine.arguments.dropFirst())
// The fairness section re-runs this binary as another uid to flood the daemon.
if arguments.first == "--flood", arguments.count == 4 {
    signal(SIGPIPE, SIG_IGN)
    FloodMode.run(mode: arguments[1], socket: arguments[2], seconds: Double(arguments[3]) ?? 10)
}
if arguments.contains("-h") || arguments.contains("--help") {
    print("""
        usage: userlistd-bench [--quick] [--only SECTION,...] [--pg-users N] [--pg-only] [--sqlite-only]
                               [--bulk-users N] [--bulk-base N] [--event-loops N] [--readers R]
          sections: roundtrip, fanout, otherwriter, sustained, idle, startup, fairness, store, bulk, journal, restart
          --pg-users N    users in the store section's PostgreSQL figures (default 100000; 1000000 for the issue's size)
          --pg-only       the store and bulk sections measure PostgreSQL alone (skip SQLite)
          --sqlite-only   the bulk section measures SQLite alone (skips PostgreSQL)
          --bulk-users N  users the bulk section imports (default 1000000; 100000 quick)
          --bulk-base N   users the bulk section's store holds before the import (default 1000)
          --event-loops N every daemon runs N event loops (default: the daemon's, one per core)
          --readers R     the fan-out section reads its receiving sessions on R threads, each its own
                          share (as separate clients would); default: 1 (compared with the floor and
                          Redis, as before), then again on the same sessions with one per core
        """)
    exit(0)
}
let quick = arguments.contains("--quick")
let only: Set<String>? = arguments.firstIndex(of: "--only").flatMap { index in
    index + 1 < arguments.count ? Set(arguments[index + 1].split(separator: ",").map(String.init)) : nil
}

// Descriptors: 10,000 sessions need more than the usual 1,024; the daemon inherits the limit.
var limit = rlimit()
getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
let softBefore = limit.rlim_cur
limit.rlim_cur = limit.rlim_max
// As root, past the hard limit too (the 10,000-session fan-out holds 20,000 socketpair ends).
if getuid() == 0 && limit.rlim_max < 65_536 {
    var raised = limit
    raised.rlim_cur = 65_536
    raised.rlim_max = 65_536
    if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
}
if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 {
    print("warning: could not raise RLIMIT_NOFILE to \(limit.rlim_max): \(String(cString: strerror(errno)))")
}
getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
signal(SIGPIPE, SIG_IGN)

let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
let binDirectory = executable.deletingLastPathComponent().path
let daemonBinary = "\(binDirectory)/userlistd"
guard FileManager.default.isExecutableFile(atPath: daemonBinary) else {
    print("userlistd-bench: \(daemonBinary) not found; build it first: swift build -c release --product userlistd")
    exit(1)
}
var template = Array("/tmp/ulbench.XXXXXX".utf8CString)
guard let made = mkdtemp(&template) else { print("mkdtemp failed"); exit(1) }
let directory = String(cString: made)
let context = BenchContext(quick: quick, daemonBinary: daemonBinary, binDirectory: binDirectory, directory: directory)
context.postgresUsers = arguments.firstIndex(of: "--pg-users").flatMap { index in
    index + 1 < arguments.count ? Int(arguments[index + 1]) : nil
} ?? 100_000
context.postgresOnly = arguments.contains("--pg-only")
context.sqliteOnly = arguments.contains("--sqlite-only")
func number(after flag: String) -> Int? {
    arguments.firstIndex(of: flag).flatMap { index in index + 1 < arguments.count ? Int(arguments[index + 1]) : nil }
}
context.bulkUsers = number(after: "--bulk-users")
context.bulkBase = number(after: "--bulk-base")
context.eventLoops = number(after: "--event-loops")
context.readers = number(after: "--readers")
if arguments.contains("--readers") && (context.readers ?? 0) < 1 {
    print("userlistd-bench: --readers needs a number of threads, 1 or more")
    exit(2)
}
let started = monotonicNanos()

var uts = utsname()
uname(&uts)
let kernel = withUnsafeBytes(of: &uts.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
print("userlistd-bench \(quick ? "--quick" : "(full)"): \(sysconfCores()) cores, Linux \(kernel), "
      + "RLIMIT_NOFILE \(softBefore) → \(limit.rlim_cur)")
print("daemon: \(daemonBinary); temp dir \(directory)")

@MainActor func wanted(_ name: String) -> Bool { only.map { $0.contains(name) } ?? true }
if wanted("startup") { StartupBench.run(context) }
if wanted("roundtrip") { RoundTripBench.run(context) }
if wanted("fanout") { FanOutBench.run(context) }
if wanted("otherwriter") { OtherWriterBench.run(context) }
if wanted("sustained") {
    SustainedBench.run(context)
    // Issue #15 asks for 10,000 sessions × 1 rename/s to be reported.
    if !quick { SustainedBench.run(context, label: " (10,000 × 1/s)", sessions: 10_000, perSecond: 1) }
}
if wanted("idle") { IdleSessionsBench.run(context) }
if wanted("fairness") { FairnessBench.run(context) }
if wanted("store") { StoreBench.run(context) }
if wanted("bulk") { BulkImportBench.run(context) }
if wanted("journal") { JournalBench.run(context) }
if wanted("restart") { RestartBench.run(context) }

try? FileManager.default.removeItem(atPath: directory)
print("")
print("## userlistd-bench results\(quick ? " (--quick)" : "")")
print("")
print(context.report.markdown())
print("")
print("total bench time: \(formatNanos(monotonicNanos() - started))")
