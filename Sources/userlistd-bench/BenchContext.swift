import Foundation
import Glibc
import UserListWire

/// What every section needs: where the binaries are, a private temp directory, the store file
/// shared by the daemons of one run, the sizes (full or --quick), and the report.
final class BenchContext {
    let quick: Bool
    let daemonBinary: String
    let binDirectory: String
    let directory: String
    let database: String
    let report = Report()
    /// Users in the store section's PostgreSQL figures (`--pg-users`).
    var postgresUsers = 100_000
    /// `--pg-only`: the store section skips the SQLite store bench.
    var postgresOnly = false
    /// The bulk section: SQLite alone, how many users it imports, and into how many.
    var sqliteOnly = false
    var bulkUsers: Int?
    var bulkBase: Int?
    /// `--event-loops N`: every daemon of the run gets it, to compare loop counts run by run.
    var eventLoops: Int?
    /// `--readers R`: the fan-out section spreads its receiving sessions over R reader threads
    /// (nil: 1, then one per core).
    var readers: Int?
    private var daemonCount = 0

    init(quick: Bool, daemonBinary: String, binDirectory: String, directory: String) {
        self.quick = quick
        self.daemonBinary = daemonBinary
        self.binDirectory = binDirectory
        self.directory = directory
        self.database = "\(directory)/users.sqlite3"
    }

    /// A fresh daemon (new socket and state directory, the run's store with 1,000 sample users),
    /// so one section's sessions never load the next section's measurements.
    /// A daemon on the shared store (1,000 sample users), or on `database` of its own: a section
    /// that fills its store (bulk) must not leave a million users to the sections after it.
    func startDaemon(extraFlags: [String] = [], watchdogMicros: Int? = nil,
                     database: String? = nil) throws(BenchError) -> DaemonProcess {
        daemonCount += 1
        return try DaemonProcess(binary: daemonBinary, directory: directory, name: "d\(daemonCount)",
                                 database: database ?? self.database, sampleData: 1000,
                                 extraFlags: loopFlags + extraFlags, watchdogMicros: watchdogMicros)
    }

    /// The `--event-loops` flag for a daemon, when the run sets one.
    var loopFlags: [String] { eventLoops.map { ["--event-loops", String($0)] } ?? [] }

    /// Runs `body` with a fresh daemon and stops it afterwards, reporting a daemon that would not stop.
    func withDaemon(_ section: String, extraFlags: [String] = [], watchdogMicros: Int? = nil, database: String? = nil,
                    _ body: (DaemonProcess) throws(BenchError) -> Void) {
        let daemon: DaemonProcess
        do throws(BenchError) {
            daemon = try startDaemon(extraFlags: extraFlags, watchdogMicros: watchdogMicros, database: database)
        } catch {
            report.failed(section, "daemon start", error)
            return
        }
        do throws(BenchError) { try body(daemon) } catch {
            report.failed(section, "run", error)
            let tail = daemon.logTail()
            if !tail.isEmpty {
                report.note("\(section): daemon log tail: \(tail.replacingOccurrences(of: "\n", with: " / "))")
            }
        }
        if let problem = daemon.stop() { report.note("\(section): \(problem)") }
    }

    func temporaryPath(_ name: String) -> String { "\(directory)/\(name)" }
}

/// Read-only helpers on the session state document of PROTOCOL.md §5.
struct JSONValueBox {
    let value: JSONValue
    var list: JSONValue? { value["screens"]?.arrayValue?.first?["state"] }
    var users: [JSONValue] { list?["users"]?.arrayValue ?? [] }
    var hasMore: Bool { list?["has_more"]?.boolValue ?? false }
    var loading: String { list?["loading"]?.stringValue ?? "" }
    var firstUser: (id: String, name: String)? {
        guard let user = users.first, let id = user["id"]?.stringValue, let name = user["name"]?.stringValue else {
            return nil
        }
        return (id, name)
    }
}
