import Foundation
import Glibc
import Testing
import UserListTestSupport
@testable import userctl

/// Issue 48 item 5 through tmux: every screen of the TUI (list, user, history, help) names the
/// daemon it is on in its title line, its pid and socket, so two terminals on two daemons are
/// never confused; on a 40-column screen the pid still shows. Every wait is for a screen
/// condition, never a fixed time.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)),
       .disabled(if: TUIHarness.skipReason != nil, "needs tmux and a built userlistd/userctl (see the printed reason)"))
struct TUIDaemonNameProcessTests {
    typealias H = TUIHarness

    @Test func everyScreenNamesTheDaemonByPidAndSocket() async throws {
        let h = try H(columns: 100, rows: 30)
        defer { h.tearDown() }
        let pid = try #require(h.daemon.pid, "the test's daemon runs")
        let named = "daemon pid \(pid), \(h.daemon.socketPath)"
        let user = try h.allUsers()[0]

        var lines = try await h.waitFor { H.cursorRow($0) == 2 && $0[0].contains(named) }
        #expect(lines[0].contains("· Users ") && lines[0].contains(named), "the list: \(lines[0])")
        #expect(!lines[0].contains("system"), "not taken for the system daemon: \(lines[0])")

        try h.keys("Enter")
        lines = try await h.waitFor { $0[0].contains("User: \(user.name)") }
        #expect(lines[0].contains("User: \(user.name)") && lines[0].contains(named), "the user screen: \(lines[0])")

        try h.keys("h")
        lines = try await h.waitFor { $0[0].contains("History") }
        #expect(lines[0].contains("History") && lines[0].contains(named), "the history: \(lines[0])")

        try h.keys("F1")
        lines = try await h.waitFor { $0[0].contains("Help: history") }
        #expect(lines[0].contains("Help: history") && lines[0].contains(named), "the help: \(lines[0])")

        // 40 columns: the title keeps where the cursor is, the daemon its pid at least.
        try h.keys("Escape")
        _ = try await h.waitFor { $0[0].contains("History") && !$0[0].contains("Help") }
        try h.keys("Escape")
        _ = try await h.waitFor { $0[0].contains("User: \(user.name)") }
        try h.resize(columns: 40, rows: 12)
        lines = try await h.waitFor { $0.count == 12 && $0[0].contains("pid \(pid)") && $0[0].contains("User: ") }
        #expect(lines[0].contains("User: ") && lines[0].contains("pid \(pid)"), "a narrow user screen: \(lines[0])")
        #expect(lines.allSatisfy { DisplayWidth.of($0) <= 40 }, "\(lines)")
        try h.keys("Escape")
        lines = try await h.waitFor { H.shows($0, place: 1, of: 200) && $0[0].contains("pid \(pid)") }
        #expect(H.shows(lines, place: 1, of: 200) && lines[0].contains("pid \(pid)"), "a narrow list: \(lines[0])")
    }

    /// A read-only person (whom the daemon's `status` refuses) sees the daemon's pid too, as the
    /// README promises ("daemon pid 4242, SOCKET"), not "daemon, SOCKET".
    @Test(.enabled(if: getuid() == 0, "needs root to run the TUI as nobody"))
    func aReadOnlySessionNamesTheDaemonByPidToo() async throws {
        let h = try H(columns: 100, rows: 30, command: H.readOnlyShell)
        defer { h.tearDown() }
        let pid = try #require(h.daemon.pid, "the test's daemon runs")
        let named = "daemon pid \(pid), \(h.daemon.socketPath)"
        _ = try await h.startReadOnlyTUI()
        let lines = try await h.waitFor { $0[0].contains(named) }
        #expect(lines[0].contains("· Users ") && lines[0].contains(named), "the read-only list: \(lines[0])")
    }

    /// The private daemon userctl starts (on `$XDG_RUNTIME_DIR/userlistd.sock`) is named so.
    @Test(.disabled(if: UnixProbe.answers(path: DaemonLocator.systemSocket),
                    "a system userlistd answers, and discovery uses it first"))
    func aPrivateDaemonIsNamedPrivate() async throws {
        let home = try PrivateDaemonProcessTests.Home()
        let environment = home.environment.merging(["USERLISTD_SAMPLE_DATA": "3"]) { $1 }
        let started = try PrivateDaemonProcessTests.userctl(["status"], environment)
        let pid = try #require(home.startedPID(started.stderr), "userctl started one: \(started.stderr)")
        let variables = environment.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
        let products = try #require(RealDaemon.productsDirectory)
        let tui = "env -u USERLISTD_SOCKET \(variables) \(products)/userctl --session private-\(pid) tui"
        let h = try H(sampleData: 1, columns: 120, rows: 20, command: tui + "; echo EXITED-$?; sleep 60")
        defer { h.tearDown() }

        let named = "private daemon pid \(pid), \(home.socket)"
        var lines = try await h.waitFor { H.cursorRow($0) == 2 && $0[0].contains(named) }
        #expect(lines[0].contains(named), "the list: \(lines[0])")
        try h.keys("Enter")
        lines = try await h.waitFor { $0[0].contains("User: ") }
        #expect(lines[0].contains("User: ") && lines[0].contains(named), "the user screen: \(lines[0])")
        withExtendedLifetime(home) {}  // its daemon runs, and its directory stays, until here
    }
}
