import UserListTestSupport

/// A rename through daemon A reaching a session of daemon B, both on one PostgreSQL database
/// (the commit's NOTIFY, B's feed reading the change log, B's session's patch), beside the same
/// rename reaching a second session of A (A's own commits skip the round trip) and a single
/// SQLite daemon: `save` sent → the observer's patch read, in the same run.
enum PostgresPropagationBench {
    static let section = "store"

    static func run(_ context: BenchContext, server: PostgresTestServer) {
        let rounds = context.quick ? 30 : 100
        print("== store: propagation across daemons on PostgreSQL (\(rounds) rounds each)")
        let conninfo: String
        do { conninfo = server.conninfo(try server.makeDatabase()) } catch {
            context.report.failed(section, "PostgreSQL propagation database", error)
            return
        }
        var sqlite: Samples?
        context.withDaemon(section) { daemon throws(BenchError) in
            sqlite = try FanOutBench.measure(daemon, receivers: 1, rounds: rounds, tag: "sqsingle")[0].samples
        }
        let a: DaemonProcess, b: DaemonProcess
        do throws(BenchError) {
            a = try DaemonProcess(binary: context.daemonBinary, directory: context.directory, name: "pg-a",
                                  database: conninfo, sampleData: 1000, extraFlags: context.loopFlags)
        } catch {
            context.report.failed(section, "daemon A on PostgreSQL", error)
            return
        }
        defer { if let problem = a.stop() { context.report.note("store: daemon A: \(problem)") } }
        do throws(BenchError) {
            b = try DaemonProcess(binary: context.daemonBinary, directory: context.directory, name: "pg-b",
                                  database: conninfo, sampleData: 0, extraFlags: context.loopFlags)
        } catch {
            context.report.failed(section, "daemon B on PostgreSQL", error)
            return
        }
        defer { if let problem = b.stop() { context.report.note("store: daemon B: \(problem)") } }
        do throws(BenchError) {
            let single = try FanOutBench.measure(a, receivers: 1, rounds: rounds, tag: "pgsingle")[0].samples
            let cross = try FanOutBench.measure(a, receivers: 1, rounds: rounds, tag: "pgcross",
                                                observers: b)[0].samples
            if let sqlite {
                context.report.latency(section, "SQLite, one daemon: save → patch on another session", sqlite,
                                       baseline: nil)
            }
            context.report.latency(section, "PostgreSQL, one daemon: save → patch on another session of A, vs SQLite",
                                   single, baseline: sqlite)
            context.report.latency(section, "PostgreSQL, daemon A save → patch on a session of daemon B, "
                                   + "vs one daemon", cross, baseline: single)
        } catch {
            context.report.failed(section, "propagation", error)
        }
    }
}
