import CSystemd
import Foundation
import Glibc
import ThreadLocks

/// Tells the service manager how the daemon is doing (sd_notify(3)). Sends nothing when
/// `NOTIFY_SOCKET` is unset, so running by hand costs nothing.
public final class SystemdNotifier: Sendable {
    private let enabled: Bool
    private let lastStatus = Lock<(text: String, at: ContinuousClock.Instant)?>(nil)
    /// STATUS= updates closer together than this are skipped (the last one wins next time).
    private let statusInterval: Duration

    public init(environment: [String: String] = ProcessInfo.processInfo.environment,
                statusInterval: Duration = .milliseconds(500)) {
        enabled = !(environment["NOTIFY_SOCKET"] ?? "").isEmpty
        self.statusInterval = statusInterval
    }

    /// Sends raw `KEY=value` lines.
    public func notify(_ lines: String) {
        guard enabled else { return }
        _ = sd_notify(0, lines)
    }

    public func ready(status: String) { notify("READY=1\nSTATUS=\(status)") }

    /// SIGHUP: reloading, then `ready` again. MONOTONIC_USEC lets systemd order the two.
    public func reloading() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let usec = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
        notify("RELOADING=1\nMONOTONIC_USEC=\(usec)")
    }

    public func stopping() { notify("STOPPING=1\nSTATUS=Stopping") }

    public func watchdog() { notify("WATCHDOG=1") }

    public func failed(status: String, errno code: Int32) { notify("STATUS=\(status)\nERRNO=\(code)") }

    /// Live counts, rate-limited: returns whether it was sent.
    @discardableResult
    public func status(_ make: @autoclosure () -> String, force: Bool = false) -> Bool {
        guard enabled else { return false }
        let now = ContinuousClock.now
        // The text is only built when it may be sent: counting sessions is not free.
        if !force, let last = lastStatus.withLock({ $0 }), now - last.at < statusInterval { return false }
        let text = make()
        let send = lastStatus.withLock { last -> Bool in
            if let last, last.text == text { return false }
            last = (text, now)
            return true
        }
        if send { notify("STATUS=\(text)") }
        return send
    }

    /// Half the watchdog interval when systemd asked for pings for this process, else nil.
    public static func watchdogInterval(environment: [String: String] = ProcessInfo.processInfo.environment)
        -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"], pid != String(getpid()) { return nil }
        return .microseconds(Int64(usec / 2))
    }

    // MARK: the file descriptor store (a restart that no client notices)

    /// Whether a service manager is listening (NOTIFY_SOCKET set).
    public var isEnabled: Bool { enabled }

    /// Hands `fd` to the service manager's descriptor store under `name` (`FDSTORE=1`,
    /// `FDNAME=`; the unit needs `FileDescriptorStoreMax=`). The next process of the service
    /// gets it back in LISTEN_FDS with that name. Returns whether it was sent.
    public func storeFD(_ fd: Int32, name: String) -> Bool {
        guard enabled else { return false }
        var descriptor = fd
        return sd_pid_notify_with_fds(0, 0, "FDSTORE=1\nFDNAME=\(name)", &descriptor, 1) > 0
    }

    /// Takes a descriptor out of the store (`FDSTOREREMOVE=1`): once adopted, the store's copy
    /// would keep the client's socket open after the daemon closes its own.
    public func removeStoredFD(name: String) {
        notify("FDSTOREREMOVE=1\nFDNAME=\(name)")
    }

    /// Descriptors passed in LISTEN_FDS (from the socket unit, the descriptor store, or a
    /// re-exec), with their LISTEN_FDNAMES names ("unknown" when unnamed). Unsets the variables.
    public static func listenFDsWithNames() -> [(fd: Int32, name: String)] {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        guard count > 0 else { return [] }
        defer {
            if let names {
                for index in 0..<Int(count) { free(names[index]) }
                free(names)
            }
        }
        return (0..<count).map { index in
            (SD_LISTEN_FDS_START + index, names?[Int(index)].map { String(cString: $0) } ?? "unknown")
        }
    }
}
