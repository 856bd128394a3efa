/// A save made through a second daemon on the same SQLite file: how long until a session of the
/// first daemon shows it (the first daemon learns of another process's commit from inotify and
/// `data_version`), beside the same save reaching a session of the daemon that made it. The same
/// measurement as the PostgreSQL propagation rows (`FanOutBench.measure` with `observers:`).
enum OtherWriterBench {
    static let section = "other writer"

    static func run(_ context: BenchContext) {
        let rounds = context.quick ? 10 : 100
        print("== other writer (\(rounds) rounds each: two daemons on one SQLite file)")
        context.withDaemon(section) { watching throws(BenchError) in
            let writing = try context.startDaemon()
            defer { if let problem = writing.stop() { context.report.note("\(section): \(problem)") } }
            let other = try FanOutBench.measure(writing, receivers: 1, rounds: rounds, tag: "owcross",
                                                observers: watching)[0].samples
            let same = try FanOutBench.measure(writing, receivers: 1, rounds: rounds, tag: "owsingle")[0].samples
            context.report.latency(section, "save through daemon B → patch on a session of daemon A "
                                   + "(another process's commit)", other, baseline: same)
            context.report.note("other writer: the baseline column is the same save → patch on a session "
                                + "of daemon B itself")
        }
    }
}
