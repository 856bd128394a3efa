import Dispatch
import Foundation
import UserListTestSupport

/// The store figures (first and deep page at 1M users, import rate) come from another engineer's
/// `userlistd-bench-store` when it is built next to this binary: its full run (10M users) in a
/// full bench, `--quick` (1M) in a quick one. When PostgreSQL 15 is installed, the bench starts
/// a scratch server (fsync on) and the same binary measures the PostgreSQL store beside SQLite
/// at `--pg-users` users; then `PostgresPropagationBench` measures a rename crossing daemons.
enum StoreBench {
    static func run(_ context: BenchContext) {
        print("== store")
        var server: PostgresTestServer?
        if let reason = PostgresTestServer.skipReason {
            context.report.note("store: PostgreSQL figures skipped: \(reason)")
        } else {
            do { server = try PostgresTestServer.makePrivate(durable: true) } catch {
                context.report.failed("store", "scratch PostgreSQL start", error)
            }
        }
        defer { server?.tearDown() }
        runStoreBinary(context, postgres: server)
        if let server { PostgresPropagationBench.run(context, server: server) }
    }

    private static func runStoreBinary(_ context: BenchContext, postgres server: PostgresTestServer?) {
        let binary = "\(context.binDirectory)/userlistd-bench-store"
        if context.postgresOnly && server == nil { return }
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            context.report.add("store", "first/deep page at 1M users, import rate",
                               value: "skipped: \(binary) not built")
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        var label = context.quick ? "userlistd-bench-store --quick (1M users)" : "userlistd-bench-store (10M users)"
        process.arguments = context.quick ? ["--quick"] : []
        if let server {
            do {
                let database = try server.makeDatabase()
                process.arguments! += ["--postgres", server.conninfo(database),
                                       "--postgres-users", String(context.postgresUsers)]
                if context.postgresOnly {
                    process.arguments!.append("--postgres-only")
                    label = "userlistd-bench-store --postgres-only"
                }
                label += ", PostgreSQL at \(grouped(context.postgresUsers)) users"
            } catch {
                context.report.failed("store", "scratch PostgreSQL database", error)
            }
        }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        do { try process.run() } catch {
            context.report.failed("store", label, error)
            return
        }
        let collected = OutputCollector(output.fileHandleForReading)
        let limit = context.quick ? 600.0 : 1_800.0
        if exited.wait(timeout: .now() + limit) != .success {
            process.terminate()
            context.report.note("store: userlistd-bench-store did not finish in \(Int(limit)) s; terminated")
        }
        let text = collected.finish()
        print(text)
        context.report.add("store", label,
                           value: "exit \(process.isRunning ? -1 : process.terminationStatus); "
                               + "its output follows the table")
        context.report.note("store bench output:\n\n```\n\(text.trimmingCharacters(in: .whitespacesAndNewlines))\n```")
    }
}

/// Reads a pipe to its end on a thread, so a chatty child never blocks on a full pipe.
final class OutputCollector: Sendable {
    private let thread: BenchThread
    private let box: DataBox

    final class DataBox: @unchecked Sendable {
        // Invariant: written only by the reader thread, read only after `join` succeeded.
        var data = Data()
    }

    init(_ handle: FileHandle) {
        let box = DataBox()
        self.box = box
        thread = BenchThread(name: "collect") { box.data = handle.readDataToEndOfFile() }
    }

    func finish() -> String {
        guard thread.join(timeout: 10) else { return "(output not collected)" }
        return String(decoding: box.data, as: UTF8.self)
    }
}
