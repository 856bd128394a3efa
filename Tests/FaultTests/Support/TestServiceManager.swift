import Foundation
import Glibc
import Synchronization
import ThreadLocks
import UserListTestSupport

/// A tiny service manager that speaks systemd's descriptor-store protocol, for restarts in the
/// tests: it listens on a `NOTIFY_SOCKET` datagram socket, keeps every descriptor a daemon sends
/// with `FDSTORE=1` (SCM_RIGHTS) under its `FDNAME=`, drops those named in `FDSTOREREMOVE=1`,
/// and starts the next daemon with the stored descriptors at 3, 4, … as `LISTEN_FDS`,
/// `LISTEN_FDNAMES` and its own `LISTEN_PID` (set by `sh -c 'LISTEN_PID=$$ exec …'`, since the
/// pid is known only in the child). As systemd does, it keeps its copies until removed.
final class TestServiceManager: @unchecked Sendable {
    // Invariant: `pid` changes only in start/stop, called from one test task; `state` is locked.
    struct State {
        var stored: [(name: String, fd: Int32)] = []
        var readyCount = 0
        var messages: [String] = []
    }

    let notifyPath: String
    let daemonArguments: [String]
    let logPath: String
    private let notifyFD: Int32
    private let state = Lock(State())
    private var receiver: Thread?
    /// Beats after every datagram the receiver handles, and once when it ends.
    private let heard = Pulse()
    private let receiverEnded = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private(set) var pid: pid_t = 0

    init(directory: String, daemonArguments: [String], logPath: String) throws {
        notifyPath = directory + "/notify"
        self.daemonArguments = daemonArguments
        self.logPath = logPath
        notifyFD = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard notifyFD >= 0 else { throw FaultFailure("socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(notifyPath.utf8)
            raw.copyBytes(from: bytes.prefix(raw.count - 1))
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(notifyFD, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw FaultFailure("bind \(notifyPath): errno \(errno)") }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(notifyFD, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var size: Int32 = 4 << 20
        setsockopt(notifyFD, SOL_SOCKET, SO_RCVBUF, &size, 4)
        let thread = Thread { [self] in receiveLoop() }
        thread.start()
        receiver = thread
    }

    /// Stops the daemon (SIGKILL), the receiver, and closes every stored descriptor.
    func tearDown() {
        if pid > 0 {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            pid = 0
        }
        stopping.store(true, ordering: .relaxed)
        if receiver != nil { _ = heard.blockingUntil { receiverEnded.load(ordering: .acquiring) } }
        close(notifyFD)
        unlink(notifyPath)
        state.withLock { state in
            for (_, fd) in state.stored { close(fd) }
            state.stored = []
        }
    }

    var storedNames: [String] { state.withLock { $0.stored.map(\.name) } }
    var readyCount: Int { state.withLock { $0.readyCount } }
    var messages: [String] { state.withLock { $0.messages } }

    /// Starts the daemon with whatever is stored, and waits (up to 30 s) for its READY=1.
    func start() throws {
        let readyBefore = readyCount
        let stored = state.withLock { $0.stored }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Raised copies first, so moving them down to 3… never overwrites one still to move.
        var raised: [Int32] = []
        for (_, fd) in stored { raised.append(fcntl(fd, F_DUPFD_CLOEXEC, 3 + Int32(stored.count) + 100)) }
        defer { raised.forEach { close($0) } }
        for (index, fd) in raised.enumerated() { posix_spawn_file_actions_adddup2(&actions, fd, 3 + Int32(index)) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var environment = ProcessInfo.processInfo.environment
            .filter { !["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID"].contains($0.key) }
        environment["NOTIFY_SOCKET"] = notifyPath
        environment["USERLISTD_FDSTORE"] = "1"
        if !stored.isEmpty {
            environment["LISTEN_FDS"] = String(stored.count)
            environment["LISTEN_FDNAMES"] = stored.map(\.name).joined(separator: ":")
        }
        let arguments = ["/bin/sh", "-c", "LISTEN_PID=$$; export LISTEN_PID; exec \"$0\" \"$@\""] + daemonArguments
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let rc = posix_spawn(&child, "/bin/sh", &actions, &attributes, &argv, &envp)
        guard rc == 0 else { throw FaultFailure("posix_spawn: \(rc)") }
        pid = child
        // READY=1 arrives as a datagram the receiver handles. A daemon that exits before it is
        // seen when the wait ends (at the deadline): the outcome is the same, the failure slower.
        if heard.blockingUntil(timeout: .seconds(30), { readyCount > readyBefore }) { return }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            pid = 0
            throw FaultFailure("the daemon exited before READY=1 (status \(status)): \(log)")
        }
        throw FaultFailure("no READY=1 within 30 s: \(log)")
    }

    /// `systemctl restart`: SIGTERM, wait for the exit (30 s at most), start again.
    func restart() throws {
        let old = pid
        kill(old, SIGTERM)
        let (_, killed) = reapChild(old, timeout: 30)
        pid = 0
        if killed { throw FaultFailure("the daemon did not stop within 30 s of SIGTERM: \(log)") }
        // Datagrams sent just before the exit are still queued: let the receiver take them.
        _ = heard.blockingUntil(timeout: .seconds(1)) { pendingDatagrams() == 0 }
        try start()
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)).map { String($0.suffix(3000)) } ?? "" }

    private func pendingDatagrams() -> Int32 {
        var count: Int32 = 0
        _ = ioctl(notifyFD, UInt(FIONREAD), &count)
        return count
    }

    // MARK: the notify socket

    private func receiveLoop() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let controlSize = 4096
        let control = UnsafeMutableRawPointer.allocate(byteCount: controlSize, alignment: 8)
        defer { control.deallocate() }
        while !stopping.load(ordering: .relaxed) {
            var received: [Int32] = []
            let count = buffer.withUnsafeMutableBytes { raw -> Int in
                var vector = iovec(iov_base: raw.baseAddress, iov_len: raw.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var header = msghdr()
                    header.msg_iov = vectorPointer
                    header.msg_iovlen = 1
                    header.msg_control = control
                    header.msg_controllen = controlSize
                    let n = recvmsg(notifyFD, &header, Int32(MSG_CMSG_CLOEXEC))
                    if n >= 0 { received = Self.descriptors(control, length: Int(header.msg_controllen)) }
                    return n
                }
            }
            guard count >= 0 else { continue }  // timeout: look at `stopping` again
            handle(String(decoding: buffer[0..<count], as: UTF8.self), descriptors: received)
            heard.beat()
        }
        receiverEnded.store(true, ordering: .releasing)
        heard.beat()
    }

    /// SCM_RIGHTS descriptors in a control buffer (x86_64/aarch64 `cmsghdr`: 8-byte length, level, type, data at 16).
    private static func descriptors(_ control: UnsafeMutableRawPointer, length: Int) -> [Int32] {
        var found: [Int32] = []
        var offset = 0
        while offset + 16 <= length {
            let cmsgLength = Int(control.load(fromByteOffset: offset, as: UInt64.self))
            let level = control.load(fromByteOffset: offset + 8, as: Int32.self)
            let type = control.load(fromByteOffset: offset + 12, as: Int32.self)
            guard cmsgLength >= 16 else { break }
            if level == SOL_SOCKET && type == Int32(SCM_RIGHTS) {
                for index in 0..<((cmsgLength - 16) / 4) {
                    found.append(control.load(fromByteOffset: offset + 16 + index * 4, as: Int32.self))
                }
            }
            offset += (cmsgLength + 7) & ~7
        }
        return found
    }

    private func handle(_ text: String, descriptors: [Int32]) {
        let fields = Dictionary(text.split(separator: "\n").compactMap { line -> (String, String)? in
            guard let equals = line.firstIndex(of: "=") else { return nil }
            return (String(line[..<equals]), String(line[line.index(after: equals)...]))
        }, uniquingKeysWith: { _, last in last })
        state.withLock { state in
            state.messages.append(text)
            if fields["READY"] == "1" { state.readyCount += 1 }
            if fields["FDSTORE"] == "1" {
                let name = fields["FDNAME"] ?? "stored"
                for fd in descriptors { state.stored.append((name, fd)) }
            } else {
                descriptors.forEach { close($0) }
            }
            if fields["FDSTOREREMOVE"] == "1", let name = fields["FDNAME"] {
                for (storedName, fd) in state.stored where storedName == name { close(fd) }
                state.stored.removeAll { $0.name == name }
            }
        }
    }
}
