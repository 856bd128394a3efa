import Foundation
import UserListTestSupport
import Glibc
import Testing
import UserListWire

/// One `userctl tui` under test: its own daemon (temporary directory, sample data) and its own
/// tmux server (a unique `-L` socket name, so the user's tmux server is never touched), driven
/// with send-keys and read with capture-pane.
///
/// Call `tearDown()` in a `defer` right after creating it: it kills the tmux server and the
/// daemon even when the test fails.
final class TUIHarness: @unchecked Sendable {
    // Invariant: used from one test's task at a time.
    static let tmuxPath: String? = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Why the TUI tests cannot run here, or `nil`. Printed when they are skipped.
    static let skipReason: String? = {
        let reason = tmuxPath == nil ? "tmux is not installed (apt-get install tmux)" : RealDaemon.skipReason
        if let reason { print("TUI tests skipped: \(reason)") }
        return reason
    }()

    let daemon: RealDaemon
    let server: String
    let session = "tui"
    let userctl: String
    private(set) var columns: Int
    private(set) var rows: Int

    /// Starts the daemon and a detached tmux session of `columns` x `rows` running `command`
    /// (a shell command line); `nil` runs `userctl tui` on the daemon. Nothing is left running
    /// if this throws.
    init(sampleData: Int = 200, columns: Int = 100, rows: Int = 30, command: String? = nil, daemonArguments: [String] = []) throws {
        guard let products = RealDaemon.productsDirectory else { throw RealDaemon.Failure("userctl is not built") }
        userctl = products + "/userctl"
        server = "ulct-test-\(getpid())-" + String(UUID().uuidString.prefix(8))
        self.columns = columns
        self.rows = rows
        daemon = try RealDaemon(sampleData: sampleData, extraArguments: daemonArguments)
        do {
            let status = try tmux(["new-session", "-d", "-s", session, "-x", String(columns), "-y", String(rows),
                                   command ?? "\(tuiCommand); echo EXITED-$?; sleep 60"]).status
            if status != 0 { throw RealDaemon.Failure("tmux new-session failed with status \(status)") }
            // A detached session sized by -x/-y keeps that size only with a manual window size.
            try tmux(["set-option", "-g", "window-size", "manual"])
        } catch {
            tearDown()
            throw error
        }
    }

    /// The command line that runs the TUI on this daemon, in session `tui-<server>`.
    var tuiCommand: String { "\(userctl) --socket \(daemon.socketPath) --session \(server) tui" }

    /// Kills the tmux server (and with it the TUI and the shell) and the daemon; removes both.
    func tearDown() {
        let socketPath = (try? tmux(["display-message", "-p", "#{socket_path}"]).output)?.trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try? tmux(["kill-server"])
        if let socketPath, socketPath.hasPrefix("/"), socketPath.hasSuffix(server) { unlink(socketPath) }
        daemon.tearDown()
    }

    // MARK: tmux

    @discardableResult
    func tmux(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try Self.run(Self.tmuxPath!, ["-L", server, "-f", "/dev/null", "-u"] + arguments)
    }

    /// Sends tmux key names (`Enter`, `Escape`, `Down`, `C-s`, `j`…).
    func keys(_ names: String...) throws { try keys(names) }

    func keys(_ names: [String]) throws {
        try tmux(["send-keys", "-t", session] + names)
    }

    /// Types `text` literally.
    func type(_ text: String) throws {
        try tmux(["send-keys", "-t", session, "-l", text])
    }

    /// The visible pane, one string per row (exactly `rows` of them), trailing spaces trimmed
    /// unless `keepTrailingSpaces` (then every row is as wide as the pane, as tmux sees it).
    func screen(escapes: Bool = false, keepTrailingSpaces: Bool = false) throws -> [String] {
        let output = try tmux(["capture-pane", "-p"] + (escapes ? ["-e"] : []) + (keepTrailingSpaces ? ["-N"] : []) + ["-t", session]).output
        var lines = output.components(separatedBy: "\n")
        if lines.last == "" { lines.removeLast() }
        if keepTrailingSpaces { return lines }
        return lines.map { line in
            var line = line
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
    }

    /// Polls the screen until `condition` holds on a settled screen; returns the last screen
    /// either way, so the caller's `#expect` shows what was there.
    ///
    /// Settled: a second capture right after shows the same screen. tmux may read one frame
    /// in pieces when the cores are busy, so the rows a condition waits for can be on screen
    /// while the footer or status line of the same frame is not yet; the caller then checks
    /// those lines too. The second capture gives tmux its next turn to read the rest.
    func waitFor(_ timeout: Duration = .seconds(Int(generousDeadline)), _ condition: ([String]) -> Bool) async throws -> [String] {
        // tmux is another process: its screen can only be polled, through the shared helper.
        var lines: [String] = []
        _ = try await eventually(timeout: timeout, every: .milliseconds(40)) {
            lines = try screen()
            guard condition(lines) else { return false }
            let again = try screen()
            defer { lines = again }
            return again == lines
        }
        return lines
    }

    func resize(columns: Int, rows: Int) throws {
        try tmux(["resize-window", "-t", session, "-x", String(columns), "-y", String(rows)])
        self.columns = columns
        self.rows = rows
    }

    // MARK: the TUI's screen

    /// The list row the cursor is on (marked "▸ "), as a screen row index.
    /// Starts, from the shell in this harness's pane, a TUI run as `nobody` (not root, not in the
    /// admin group: a read-only session) on this daemon, made reachable to it; returns the
    /// screen once its list shows "(read-only)". The harness must run a shell (`command:`).
    func startReadOnlyTUI() async throws -> [String] {
        _ = try await waitFor { $0.first?.hasPrefix("ULCT$") == true }
        chmod(daemon.directory, 0o755)
        chmod(daemon.socketPath, 0o666)
        try type("clear; setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=/tmp " + tuiCommand)
        try keys("Enter")
        return try await waitFor { Self.cursorRow($0) == 2 && $0.last?.contains("(read-only)") == true }
    }

    /// The shell a read-only TUI is started from (`startReadOnlyTUI`).
    static let readOnlyShell = "env PS1='ULCT$ ' /bin/sh"

    static func cursorRow(_ lines: [String]) -> Int? { lines.firstIndex { $0.hasPrefix("▸ ") } }

    static func header(_ lines: [String]) -> String { lines.first ?? "" }

    /// Whether the status line says `loaded of total loaded` (the title says where the cursor is).
    static func shows(_ lines: [String], loaded: Int, of total: Int) -> Bool {
        header(lines).contains("Users ") && (lines.last ?? "").contains(" \(counted(loaded)) of \(counted(total)) loaded")
    }

    /// Whether the list header says the cursor is at `place` of `total` ("Users 312 of 5,000").
    static func shows(_ lines: [String], place: Int, of total: Int) -> Bool {
        header(lines).contains("Users \(counted(place)) of \(counted(total))")
    }

    /// 5000 as "5,000", as the TUI counts.
    static func counted(_ number: Int) -> String {
        let digits = String(number)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return out
    }

    // MARK: one-shot userctl

    /// Runs the built `userctl` against the daemon (a separate connection and session).
    func userctl(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try Self.run(userctl, ["--socket", daemon.socketPath] + arguments)
    }

    /// Waits until the daemon has this TUI's unsaved edit (`userctl sessions`: its session's
    /// `draft`), which the screen shows as "modified" before the draft is sent (at most every
    /// 50 ms); returns whether it does. A save by someone else merges into the daemon's draft
    /// only once it has one.
    func waitForDaemonDraft(_ timeout: Duration = .seconds(Int(generousDeadline))) async throws -> Bool {
        try await eventually(timeout: timeout, every: .milliseconds(40)) {
            let run = try userctl(["sessions", "--json"])
            let sessions = (try? JSONValue(parsing: run.output))?.arrayValue ?? []
            return sessions.contains { $0["key"]?.stringValue == server && $0["draft"]?.boolValue == true }
        }
    }

    /// Every user in list order, from `userctl list --all --json`.
    func allUsers() throws -> [(id: String, name: String, email: String)] {
        let run = try userctl(["list", "--all", "--json"])
        guard run.status == 0, let users = try JSONValue(parsing: run.output).arrayValue else {
            throw RealDaemon.Failure("userctl list failed (\(run.status)): \(run.output)")
        }
        return users.map { ($0["id"]?.stringValue ?? "", $0["name"]?.stringValue ?? "", $0["email"]?.stringValue ?? "") }
    }

    /// The pid of the first process (other than the shell) whose command line starts with the
    /// built userctl and runs `tui` on this daemon.
    func tuiPID() -> pid_t? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        for entry in entries {
            guard let pid = pid_t(entry),
                  let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            let argv = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            if argv.first == userctl, argv.contains(daemon.socketPath), argv.last == "tui" { return pid }
        }
        return nil
    }

    /// glibc 2.34's `posix_spawn_file_actions_addclosefrom_np`, which the Glibc module does not export.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Runs a program with posix_spawn and waitpid, stdout and stderr to a file, descriptors
    /// above 2 closed in the child. Not Foundation's Process: `new-session` starts the tmux
    /// server, which would inherit (and hold open) any pipe of this process.
    static func run(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let file = "/tmp/ulct-spawn-\(getpid())-\(UUID().uuidString.prefix(8)).out"
        defer { unlink(file) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, file, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        if let closeFrom = closeFrom { _ = closeFrom(&actions, 3) }
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // The test runs on a worker thread that blocks most signals; a child inherits that mask
        // (and ignored signals), and a tmux server started so never exits on kill-server, nor
        // do the shells and TUIs in its panes react to signals as they would in a terminal.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard spawned == 0 else { throw RealDaemon.Failure("cannot run \(path): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exitStatus = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return (exitStatus, (try? String(contentsOfFile: file, encoding: .utf8)) ?? "")
    }
}
