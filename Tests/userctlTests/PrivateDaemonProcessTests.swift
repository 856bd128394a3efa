import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire
@testable import userctl

/// Issue 48 item 5: no surprise daemons. When nothing answers, userctl says where it looked; the
/// private daemon it starts has an empty store unless sample users are asked for; `status` says
/// which daemon answered.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)),
       .disabled(if: RealDaemon.skipReason != nil, "userlistd not built: swift build first"),
       .disabled(if: UnixProbe.answers(path: DaemonLocator.systemSocket),
                 "a system userlistd answers, and discovery uses it first"))
struct PrivateDaemonProcessTests {
    /// A runtime directory and a data directory of the test's own, removed at the end, and
    /// every daemon userctl started in them stopped.
    final class Home {
        let base: String
        var environment: [String: String] { ["XDG_RUNTIME_DIR": base + "/run", "XDG_DATA_HOME": base + "/data"] }
        var socket: String { base + "/run/userlistd.sock" }
        private var started: [pid_t] = []

        init() throws {
            var template = Array("/tmp/ulpd-XXXXXX".utf8CString)
            guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                throw RealDaemon.Failure("mkdtemp failed")
            }
            base = String(cString: made)
            mkdir(base + "/run", 0o700)
        }

        /// The pid in "started a private userlistd (pid N)", remembered to be stopped.
        func startedPID(_ stderr: String) -> pid_t? {
            let pattern = #"started a private userlistd \(pid \d+\)"#
            guard let range = stderr.range(of: pattern, options: .regularExpression),
                  let pid = pid_t(stderr[range].filter(\.isNumber)) else { return nil }
            started.append(pid)
            return pid
        }

        /// SIGTERM to each daemon started here, then waits until its socket is gone.
        func stopDaemons() {
            for pid in started { kill(pid, SIGTERM) }
            eventually { started.allSatisfy(Self.exited) }
            started.removeAll()
        }

        /// Gone, or a zombie waiting for whoever adopted it (userctl, its parent, has exited).
        static func exited(_ pid: pid_t) -> Bool {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.range(of: ") ", options: .backwards) else { return true }
            return stat[close.upperBound...].hasPrefix("Z")
        }

        deinit {
            stopDaemons()
            try? FileManager.default.removeItem(atPath: base)
        }
    }

    static func userctl(_ arguments: [String], _ environment: [String: String]) throws -> UserctlCommandTests.Run {
        try UserctlCommandTests.userctl(arguments, environment: environment)
    }

    @Test func nothingAnswersSoUserctlSaysWhereItLookedAndStartsAnEmptyPrivateDaemon() throws {
        let home = try Home()
        let looked = "no userlistd answers at \(DaemonLocator.systemSocket) or \(home.socket)"
        let refused = try Self.userctl(["--no-spawn", "status"], home.environment)
        #expect(refused.status == 69 && refused.stderr.contains(looked), "\(refused.stderr)")

        let status = try Self.userctl(["status"], home.environment)
        #expect(status.status == 0, "\(status.stderr)")
        let pid = try #require(home.startedPID(status.stderr), "\(status.stderr)")
        #expect(status.stderr.contains(looked + "; started a private userlistd (pid \(pid)) on \(home.socket)"),
                "\(status.stderr)")
        #expect(status.stderr.contains("\(home.base)/data/userlistd/users.sqlite3"),
                "says where its store is: \(status.stderr)")
        let daemonRow = status.stdout.split(separator: "\n").first { $0.hasPrefix("daemon ") }
        #expect(daemonRow?.contains("your private one (pid \(pid), \(home.socket)") == true, "\(status.stdout)")

        let list = try Self.userctl(["list", "--json"], home.environment)
        #expect(list.status == 0 && list.stdout == "[]\n", "no sample users unless asked: \(list.stdout.prefix(200))")
        #expect(!list.stderr.contains("started"), "the same daemon answers: \(list.stderr)")
    }

    @Test func sampleUsersOnlyWhenAsked() throws {
        let home = try Home()
        let asked = home.environment.merging(["USERLISTD_SAMPLE_DATA": "7"]) { $1 }
        let list = try Self.userctl(["list", "--json"], asked)
        #expect(list.status == 0, "\(list.stderr)")
        #expect(home.startedPID(list.stderr) != nil, "\(list.stderr)")
        #expect(list.stderr.contains("7 users of sample data"), "\(list.stderr)")
        #expect(try JSONValue(parsing: list.stdout).arrayValue?.count == 7)
        home.stopDaemons()

        let nonsense = home.environment.merging(["USERLISTD_SAMPLE_DATA": "lots"]) { $1 }
        let bad = try Self.userctl(["status"], nonsense)
        #expect(bad.status == 64 && bad.stderr.contains("USERLISTD_SAMPLE_DATA must be a whole number"),
                "\(bad.stderr)")
        #expect(home.startedPID(bad.stderr) == nil)
    }

    @Test func statusNamesADaemonGivenBySocket() throws {
        let daemon = try RealDaemon(sampleData: 1)
        defer { daemon.tearDown() }
        let status = try UserctlCommandTests.userctl(["--socket", daemon.socketPath, "status"])
        let row = status.stdout.split(separator: "\n").first { $0.hasPrefix("daemon ") }
        #expect(row?.contains("the one at \(daemon.socketPath) (pid \(daemon.pid ?? 0),") == true, "\(status.stdout)")
    }
}
