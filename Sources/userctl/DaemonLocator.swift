import Foundation
import Glibc

/// Finds the daemon to talk to, starting a per-user one when none answers.
///
/// The order, the same for root and for other users (and the same text in `--help`, the README
/// and `userctl(1)`, all from `DaemonLocator.discoveryText`):
/// 1. `--socket PATH`, 2. `$USERLISTD_SOCKET` (both used as given: nothing is started for them),
/// 3. the system socket `/run/userlistd/userlistd.sock` if a daemon answers there,
/// 4. the per-user socket `$XDG_RUNTIME_DIR/userlistd.sock`, else `/tmp/userlistd-$UID/userlistd.sock`
///    (that directory checked first, see `RuntimeDirectory`). When nothing answers, a per-user
///    `userlistd` is started there in the background with its store in
///    `$XDG_DATA_HOME/userlistd` (else `~/.local/share/userlistd`), never under /var/lib or /run.
struct DaemonLocator {
    static let systemSocket = "/run/userlistd/userlistd.sock"

    /// The discovery order as `--help`, the README and the man page print it.
    static let discoveryText = """
    1. --socket PATH
    2. $USERLISTD_SOCKET
    3. /run/userlistd/userlistd.sock (the system daemon), if it answers
    4. $XDG_RUNTIME_DIR/userlistd.sock, or /tmp/userlistd-$UID/userlistd.sock when
       XDG_RUNTIME_DIR is unset (a directory that must be yours and mode 700)
    When nothing answers at 3 or 4, userctl starts a private userlistd on the socket of 4, with its
    store in $XDG_DATA_HOME/userlistd (~/.local/share/userlistd), says so on stderr (where it looked,
    the pid, the store), and 'userctl status' names it. Its store starts empty: sample users only
    when asked, USERLISTD_SAMPLE_DATA=N (make demo asks for 5,000). Not with --no-spawn.
    The same for root: root's own daemon never uses /run or /var/lib unless systemd starts it.
    """

    var environment: [String: String] = ProcessInfo.processInfo.environment
    var uid: uid_t = getuid()

    /// Sample users for an empty store of a daemon started here: none unless asked
    /// (`USERLISTD_SAMPLE_DATA=N`; `make demo` asks for 5,000). A directory that fills itself with
    /// made-up people is a surprise nobody wants in a real one.
    var sampleData: Int? {
        guard let text = environment["USERLISTD_SAMPLE_DATA"], !text.isEmpty else { return nil }
        return Int(text)
    }

    var runtimeDirectory: RuntimeDirectory { .forUser(environment: environment, uid: uid) }

    /// Where this user's own daemon listens, and its state directory (database, sessions, log).
    var perUserPaths: (socket: String, stateDirectory: String) {
        // Never a guessable shared directory: without HOME, the home directory from passwd.
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.homeDirectory(uid) ?? "/nonexistent"
        let data = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "\(home)/.local/share"
        let state = data + "/userlistd"
        return ("\(runtimeDirectory.path)/userlistd.sock", state)
    }

    /// This user's login name (or "uid N"), for commands a person can pass on to an admin.
    static var loginName: String {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name
        else { return "uid \(getuid())" }
        return String(cString: name)
    }

    static func homeDirectory(_ uid: uid_t) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, let result,
              let dir = result.pointee.pw_dir else { return nil }
        return String(cString: dir)
    }

    func locate(explicit: String?, spawn: Bool) throws(CommandFailure) -> String {
        if let explicit { return explicit }
        if let fromEnvironment = environment["USERLISTD_SOCKET"], !fromEnvironment.isEmpty { return fromEnvironment }
        if answers(Self.systemSocket) { return Self.systemSocket }
        let (socket, stateDirectory) = perUserPaths
        // Checked before connecting: a socket in someone else's directory could be theirs.
        try runtimeDirectory.check(uid: uid)
        if answers(socket) { return socket }
        let tried = [Self.systemSocket, socket].reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        let looked = "no userlistd answers at \(tried.joined(separator: " or "))"
        guard spawn else {
            throw CommandFailure(.unavailable, "\(looked) (and --no-spawn was given; start one, or name it with "
                                 + "--socket)")
        }
        if let asked = environment["USERLISTD_SAMPLE_DATA"], !asked.isEmpty, (Int(asked) ?? -1) < 0 {
            throw CommandFailure(.usage, "USERLISTD_SAMPLE_DATA must be a whole number of sample users, not '\(asked)'")
        }
        try runtimeDirectory.prepare(uid: uid, create: true)
        try start(socket: socket, stateDirectory: stateDirectory, looked: looked)
        return socket
    }

    /// Which daemon a socket belongs to: the system's, this user's private one (the one userctl
    /// starts), or one named by --socket or $USERLISTD_SOCKET.
    enum Kind: Equatable {
        case system, perUser, named
    }

    func kind(of socket: String) -> Kind {
        if socket == Self.systemSocket { return .system }
        return socket == perUserPaths.socket ? .perUser : .named
    }

    /// Which daemon answers at `socket`, for `status` (the TUI's title line says it shorter,
    /// `DaemonLabel`).
    func describe(socket: String, pid: Int?) -> String {
        let process = pid.map { "pid \($0), " } ?? ""
        switch kind(of: socket) {
        case .system: return "the system's (\(process)\(socket))"
        case .perUser: return "your private one (\(process)\(socket), store in \(perUserPaths.stateDirectory))"
        case .named: return "the one at \(socket) (\(process)named by --socket or $USERLISTD_SOCKET)"
        }
    }

    func answers(_ path: String) -> Bool { UnixProbe.answers(path: path) }

    /// Starts `userlistd` detached: its own session (setsid), stdin and stdout on /dev/null,
    /// stderr appended to `<state>/userlistd.log`. Waits up to 5 s for the socket to answer.
    /// `looked`: where nothing answered, said before what was started instead.
    func start(socket: String, stateDirectory: String, looked: String) throws(CommandFailure) {
        guard let executable = findDaemonExecutable() else {
            throw CommandFailure(.unavailable, "\(looked), and no userlistd executable was found next to userctl "
                                 + "or on PATH to start one")
        }
        try? FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
        let log = "\(stateDirectory)/userlistd.log"
        let database = "\(stateDirectory)/users.sqlite3"
        var arguments = [executable, "--socket", socket, "--database", database, "--state-directory", stateDirectory]
        if let sampleData { arguments += ["--sample-data", String(sampleData)] }
        let pid = try Spawner.spawnDetached(arguments, stdinPath: "/dev/null", stdoutPath: "/dev/null", stderrPath: log)
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            if answers(socket) {
                let samples = sampleData.map { ", \(Plural.users($0)) of sample data if it was empty" } ?? ""
                Console.err("userctl: \(looked); started a private userlistd (pid \(pid)) on \(socket), "
                            + "its store \(database)\(samples) (log: \(log); stop it: kill \(pid); "
                            + "--no-spawn never starts one)")
                return
            }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                throw CommandFailure(.unavailable, "started userlistd (pid \(pid)) but it exited at once; see \(log)")
            }
            usleep(50_000)
        }
        throw CommandFailure(.unavailable,
                             "started userlistd (pid \(pid)) but \(socket) did not answer within 5 s; see \(log)")
    }

    /// `userlistd` in the directory of this executable (/proc/self/exe), else on PATH.
    func findDaemonExecutable() -> String? {
        if let me = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let sibling = (me as NSString).deletingLastPathComponent + "/userlistd"
            if access(sibling, X_OK) == 0 { return sibling }
        }
        for directory in (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/userlistd"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}

enum UnixProbe {
    /// Whether something accepts a connection at `path` now.
    static func answers(path: String) -> Bool {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }
}

enum Spawner {
    /// Marks every descriptor above stderr close-on-exec: the daemon gets none of userctl's. A
    /// descriptor userctl inherited (a pipe of the program that ran it) held open by a daemon that
    /// runs for days would keep that program's reader waiting for an end that never comes.
    /// (glibc's `posix_spawn_file_actions_addclosefrom_np` is not visible to Swift.)
    static func closeOthersOnExec() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return }
        for fd in names.compactMap({ Int32($0) }) where fd > 2 {
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    /// posix_spawn with POSIX_SPAWN_SETSID so the daemon outlives this terminal session.
    static func spawnDetached(_ arguments: [String], stdinPath: String, stdoutPath: String,
                              stderrPath: String) throws(CommandFailure) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdinPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0o600)
        closeOthersOnExec()
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        let setsidFlag: Int32 = 0x80  // POSIX_SPAWN_SETSID (glibc >= 2.26)
        let flags = setsidFlag | Int32(POSIX_SPAWN_SETSIGMASK) | Int32(POSIX_SPAWN_SETSIGDEF)
        posix_spawnattr_setflags(&attributes, Int16(flags))
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGHUP)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        argv.append(nil)
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, environ)
        guard result == 0 else {
            throw CommandFailure(.unavailable, "cannot start \(arguments[0]): \(String(cString: strerror(result)))")
        }
        return pid
    }
}

/// The default session key.
///
/// A terminal gets a key of its own, stable while it is open: `$TMUX_PANE` inside tmux, else the
/// tty's name (`ttyname(0)`), so running `userctl` again in the same terminal returns to the same
/// screens and drafts. When stdin is not a terminal (scripts, pipes, cron) every run gets a fresh
/// random key, so two scripts never share drafts. `--session KEY` overrides both.
enum SessionKeys {
    static func defaultKey(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if isatty(0) == 1 {
            if let pane = environment["TMUX_PANE"], !pane.isEmpty { return "tmux:\(getuid()):\(pane)" }
            if let name = ttyname(0) { return "tty:\(String(cString: name))" }
        }
        var generator = SystemRandomNumberGenerator()
        return "userctl-" + String(generator.next(), radix: 36)
    }
}
