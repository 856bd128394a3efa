import Foundation
import UserListTestSupport
import Glibc
import Synchronization
import ThreadLocks

/// Where the tests find the real daemon: `<repo>/.build/debug/userlistd`, built by `swift build`.
enum Repo {
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }  // Support, FaultTests, Tests, <repo>
        return url.path
    }()
    static var daemonBinary: String { root + "/.build/debug/userlistd" }
    static var corpus: String { root + "/Tests/FaultTests/Corpus" }
}

struct FaultFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A private temporary directory, removed (immutable flags cleared first) when the test ends.
final class TempDirectory: @unchecked Sendable {
    let path: String

    init(_ label: String) throws {
        var template = Array("/tmp/userlistd-fault-\(label)-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw FaultFailure("mkdtemp failed: errno \(errno)")
        }
        path = String(cString: made)
    }

    func remove() {
        _ = Shell.run("chattr", ["-R", "-i", path])
        try? FileManager.default.removeItem(atPath: path)
    }

    deinit { remove() }
}

/// Runs a short command and returns its exit status and combined output.
enum Shell {
    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do { try process.run() } catch { return (127, "\(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

/// The real `userlistd` binary as a child process on a socket, database and state directory of
/// the test's own. Every child is killed (SIGKILL) and reaped when its owner goes away.
final class ChildDaemon: @unchecked Sendable {
    // Invariant for @unchecked Sendable: one test drives one daemon, one call at a time.
    let socketPath: String
    let databasePath: String
    let stateDirectory: String
    let logPath: String
    let configPath: String
    let extraArguments: [String]
    private(set) var pid: pid_t = 0
    private(set) var exitStatus: Int32?

    init(directory: String, databasePath: String? = nil, sampleData: Int = 30, extra: [String] = []) {
        socketPath = directory + "/d.sock"
        self.databasePath = databasePath ?? directory + "/users.sqlite3"
        stateDirectory = directory + "/state"
        logPath = directory + "/daemon.log"
        configPath = directory + "/empty.conf"
        // No idle pings: these tests' clients do not answer them, and a wait under load must not
        // turn into an idle_timeout close (LivenessTests cover pings). `extra` comes last and wins.
        // The rate limits are lifted: every client of a fault test is this test's uid, bursts of
        // 1,000 connects are the point of some, and a fast machine's renamers pass 200 intents a
        // second (LifecycleTests and the flood test set them back). `extra` comes last and wins.
        extraArguments = ["--sample-data", String(sampleData), "--log-level", "warning", "--ping-interval", "0",
                          "--intents-per-second", "1000000",
                          "--connections-per-second-per-uid", "1000000", "--intents-per-second-per-uid", "1000000"] + extra
    }

    var isRunning: Bool { pid > 0 && exitStatus == nil }

    /// Spawns the daemon and waits (up to `timeout`) until its socket accepts connections.
    func start(timeout: Double = generousDeadline) throws {
        precondition(!isRunning, "already running")
        guard access(Repo.daemonBinary, X_OK) == 0 else {
            throw FaultFailure("\(Repo.daemonBinary) is missing: run `swift build` first")
        }
        // An empty config file of our own: nothing from /etc/userlistd.conf leaks into the test.
        _ = FileManager.default.createFile(atPath: configPath, contents: Data())
        let arguments = [Repo.daemonBinary, "--config", configPath, "--socket", socketPath,
                         "--database", databasePath, "--state-directory", stateDirectory] + extraArguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The test process may ignore or block signals; the daemon must start with defaults.
        var all = sigset_t()
        sigfillset(&all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        // No systemd variables: the daemon must listen on its own socket.
        let environment = ProcessInfo.processInfo.environment
            .filter { !["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"].contains($0.key) }
            .map { "\($0.key)=\($0.value)" }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let rc = posix_spawn(&child, Repo.daemonBinary, &actions, &attributes, &argv, &envp)
        guard rc == 0 else { throw FaultFailure("posix_spawn failed: \(rc)") }
        pid = child
        exitStatus = nil
        let listening = firstConnection(timeout: timeout, givesUp: { reap() != nil }) {
            try RawSocket.connect(socketPath)
        }
        if let fd = listening {
            close(fd)
            return
        }
        if reap() != nil { throw FaultFailure("the daemon exited during startup (status \(exitStatus!)): \(log)") }
        throw FaultFailure("the daemon did not answer on \(socketPath) within \(timeout) s: \(log)")
    }

    /// Reaps the child if it has exited; returns its wait status decoded (exit code or 128+signal).
    @discardableResult
    func reap() -> Int32? {
        if let exitStatus { return exitStatus }
        guard pid > 0 else { return nil }
        var status: Int32 = 0
        let rc = waitpid(pid, &status, WNOHANG)
        guard rc == pid else { return nil }
        let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        exitStatus = code
        return code
    }

    func signal(_ number: Int32) {
        guard isRunning else { return }
        kill(pid, number)
    }

    /// Waits up to `timeout` for the child to exit (woken by the exit); nil if it was still
    /// running then (it is killed, so that nothing is left behind).
    func waitForExit(timeout: Double) -> Int32? {
        if let exitStatus { return exitStatus }
        guard pid > 0 else { return nil }
        let (code, killed) = reapChild(pid, timeout: timeout)
        exitStatus = code
        return killed ? nil : code
    }

    /// SIGKILL and reap (no-op when already gone).
    func killHard() {
        guard isRunning else { return }
        kill(pid, SIGKILL)
        _ = waitForExit(timeout: 10)
    }

    /// The end of the log, for failure messages.
    var log: String { String(wholeLog.suffix(2000)) }

    /// Everything the daemon has logged, across restarts and re-executions.
    var wholeLog: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Open descriptors of the daemon (entries of /proc/PID/fd).
    var openDescriptorCount: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    /// VmRSS of the daemon, in bytes.
    var residentBytes: Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return (line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0) * 1024
        }
        return 0
    }

    deinit { killHard() }
}


/// Starts `count` threads running `body(index)` and waits for all of them.
func runThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.start()
    }
    group.wait()
}

/// Raises this process's RLIMIT_NOFILE soft limit to its hard limit (children inherit it).
func raiseDescriptorLimit(to wanted: UInt) -> UInt {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    let target = min(max(UInt(limit.rlim_cur), wanted), UInt(limit.rlim_max))
    limit.rlim_cur = rlim_t(target)
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    return target
}

/// A stop flag shared by threads.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}

/// Samples collected by several threads.
final class Samples: Sendable {
    private let values = Lock<[Double]>([])
    /// Called after each sample is added (on the adding thread): to take another measurement at
    /// the same moments.
    private let afterAdd: (@Sendable () -> Void)?

    init(afterAdd: (@Sendable () -> Void)? = nil) { self.afterAdd = afterAdd }

    func add(_ value: Double) {
        values.withLock { $0.append(value) }
        afterAdd?()
    }
    var all: [Double] { values.withLock { $0 } }

    func percentile(_ p: Double) -> Double {
        let sorted = all.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    }
}
