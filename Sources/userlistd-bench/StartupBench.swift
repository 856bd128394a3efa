import Dispatch
import Foundation

/// Spawn → READY=1 on a NOTIFY_SOCKET the bench binds (what systemd waits for), against the
/// spawn of /bin/true to its exit, both through Foundation's Process, interleaved.
enum StartupBench {
    static let section = "start to ready"

    static func run(_ context: BenchContext) {
        let rounds = context.quick ? 3 : 10
        print("== start to ready (median of \(rounds))")
        // An untimed first start fills the empty store with the 1,000 sample users.
        context.withDaemon(section) { _ throws(BenchError) in }
        var ready = Samples(), trueRuns = Samples()
        do throws(BenchError) {
            for _ in 0..<rounds {
                let daemon = try context.startDaemon()
                ready.append(daemon.startToReady)
                if let problem = daemon.stop() { context.report.note("start to ready: \(problem)") }
                trueRuns.append(try spawnTrue())
            }
        } catch {
            context.report.failed(section, "spawn", error)
            return
        }
        context.report.add(section, "spawn → READY=1, median of \(rounds) (store already filled)",
                           value: formatNanos(ready.median),
                           baseline: "/bin/true spawn → exit \(formatNanos(trueRuns.median))",
                           ratio: fixed(Double(ready.median) / Double(max(1, trueRuns.median)), 1) + "x",
                           target: "≤ 20 ms", met: ready.median <= 20_000_000)
    }

    static func spawnTrue() throws(BenchError) -> UInt64 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        let start = monotonicNanos()
        do { try process.run() } catch { throw BenchError("cannot run /bin/true: \(error)") }
        guard exited.wait(timeout: .now() + 5) == .success else { throw BenchError("/bin/true did not exit in 5 s") }
        return monotonicNanos() - start
    }
}
