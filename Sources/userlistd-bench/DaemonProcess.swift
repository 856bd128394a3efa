import Foundation
import Glibc

/// A real `userlistd` child process on its own socket, store and state directory, started with
/// `NOTIFY_SOCKET` pointing at a datagram socket the bench reads, so "ready" means what systemd
/// would see. Stopped with SIGTERM (SIGKILL after a timeout).
final class DaemonProcess {
    let process: Process
    let socketPath: String
    let logPath: String
    /// Spawn to READY=1, in nanoseconds.
    let startToReady: UInt64

    var pid: Int32 { process.processIdentifier }

    /// Flags that lift the per-uid limits, so the bench measures the machinery rather than the policy.
    static let benchFlags = [
        "--max-connections-per-uid", "100000", "--max-sessions-per-uid", "100000",
        "--intents-per-second", "1000000", "--intents-per-second-per-uid", "1000000",
        "--connections-per-second-per-uid", "1000000", "--log-level", "warning",
    ]

    /// Starts the daemon in `directory` (created by the caller) and waits for READY=1.
    /// `extraFlags` come after the bench's own, so they win (a section that measures a limit).
    init(binary: String, directory: String, name: String, database: String, sampleData: Int,
         extraFlags: [String] = [], watchdogMicros: Int? = nil, timeout: Double = 60) throws(BenchError) {
        socketPath = "\(directory)/\(name).sock"
        logPath = "\(directory)/\(name).log"
        let notifyPath = "\(directory)/\(name).notify"
        let notifyFD = try Sockets.bind(notifyPath, type: Int32(SOCK_DGRAM.rawValue))
        // With a watchdog, the socket stays open for `watchdogPings` until the daemon stops.
        var keepsNotifySocket = false
        defer { if !keepsNotifySocket { close(notifyFD); unlink(notifyPath) } }
        Sockets.setReceiveTimeout(notifyFD, seconds: 0.1)

        let stateDirectory = "\(directory)/\(name).state"
        try? FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--socket", socketPath, "--database", database, "--state-directory", stateDirectory,
                             "--sample-data", String(sampleData)] + Self.benchFlags + extraFlags
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = notifyPath
        environment.removeValue(forKey: "LISTEN_FDS")
        environment.removeValue(forKey: "WATCHDOG_USEC")
        environment.removeValue(forKey: "WATCHDOG_PID")
        if let watchdogMicros { environment["WATCHDOG_USEC"] = String(watchdogMicros) }
        process.environment = environment
        process.standardOutput = FileHandle(forWritingAtPath: logPath)
        process.standardError = FileHandle(forWritingAtPath: logPath)
        self.process = process

        let started = monotonicNanos()
        do { try process.run() } catch { throw BenchError("cannot start \(binary): \(error)") }
        let until = started + UInt64(timeout * 1e9)
        var buffer = [UInt8](repeating: 0, count: 4096)
        var ready: UInt64?
        while ready == nil {
            let count = buffer.withUnsafeMutableBytes { recv(notifyFD, $0.baseAddress, $0.count, 0) }
            let now = monotonicNanos()
            if count > 0,
               String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n").contains("READY=1") {
                ready = now
            } else if !process.isRunning {
                throw BenchError("userlistd exited with status \(process.terminationStatus) before READY=1; "
                                 + "see \(logPath)")
            } else if now >= until {
                kill(process.processIdentifier, SIGKILL)
                throw BenchError("userlistd sent no READY=1 within \(Int(timeout)) s; see \(logPath)")
            }
        }
        startToReady = ready! - started
        if watchdogMicros != nil {
            keepsNotifySocket = true
            watchdog = WatchdogListener(fd: notifyFD, path: notifyPath)
        } else {
            watchdog = nil
        }
    }

    /// Records when each WATCHDOG=1 arrives (daemons started with `watchdogMicros`).
    let watchdog: WatchdogListener?

    /// Resident memory of the daemon in KiB (VmRSS of /proc/PID/status).
    func residentKiB() -> Int? { status("VmRSS:") }

    /// Peak resident memory of the daemon in KiB (VmHWM).
    func peakKiB() -> Int? { status("VmHWM:") }

    private func status(_ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(field) {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }

    /// Number of open descriptors of the daemon (entries of /proc/PID/fd).
    func openDescriptors() -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count
    }

    /// SIGTERM, then wait up to `timeout` seconds; SIGKILL if it did not exit. Returns a note when it misbehaved.
    @discardableResult
    func stop(timeout: Double = 15) -> String? {
        defer { watchdog?.close() }
        guard process.isRunning else { return "userlistd had already exited (status \(process.terminationStatus))" }
        kill(pid, SIGTERM)
        let until = deadline(seconds: timeout)
        while process.isRunning && monotonicNanos() < until { sleepMillis(5) }
        if process.isRunning {
            kill(pid, SIGKILL)
            let killedUntil = deadline(seconds: 5)
            while process.isRunning && monotonicNanos() < killedUntil { sleepMillis(5) }
            return "userlistd did not exit within \(Int(timeout)) s of SIGTERM; killed"
        }
        let status = process.terminationStatus
        return status == 0 ? nil : "userlistd exited with status \(status) after SIGTERM"
    }

    /// The last lines of the daemon's log (for error reports).
    func logTail(lines: Int = 5) -> String {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return "" }
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }
}

/// Reads a daemon's notify socket on a thread of its own and keeps the arrival time of every
/// WATCHDOG=1, so a section can tell whether the daemon kept feeding its watchdog.
final class WatchdogListener: @unchecked Sendable {
    // Invariant that makes it Sendable: `pings` and `closed` are touched only under `lock`.
    private let lock = NSLock()
    private var pings: [UInt64] = []
    private var closed = false
    private let fd: Int32
    private let path: String

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !lock.withLock({ closed }) {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { continue }  // the 0.1 s receive timeout: look at `closed` again
                if String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n").contains("WATCHDOG=1") {
                    let now = monotonicNanos()
                    lock.withLock { pings.append(now) }
                }
            }
            Glibc.close(fd)
            unlink(path)
        }.start()
    }

    /// Arrival times (monotonic nanoseconds) of the pings so far.
    var arrivals: [UInt64] { lock.withLock { pings } }

    func close() { lock.withLock { closed = true } }
}
