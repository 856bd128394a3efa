import Foundation
import Glibc
import Testing
import UserListWire
import UserListTestSupport

/// The attacks of issue #11 ("safe on a shared machine"), played against the real `userlistd`
/// binary. Those that need a second local user run as root and become other uids through
/// `setpriv`; elsewhere they are disabled, with the reason shown.
@Suite(.childProcesses, .serialized) struct AttackProcessTests {
    static let isRoot = getuid() == 0
    static let hasSetpriv = FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
    static let asOtherUID: Comment = "needs root and /usr/bin/setpriv to act as another local user"

    // MARK: the socket path (finding 2)

    @Test func aRegularFileAtTheSocketPathIsLeftUntouchedAndTheDaemonRefuses() throws {
        let directory = try TempDirectory("attack-file")
        let notes = directory.path + "/notes.txt"
        try Data("my notes\n".utf8).write(to: URL(fileURLWithPath: notes))
        let run = try DaemonRun.once(socket: notes, directory: directory.path)
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("a regular file there, not a socket"), "\(run.output)")
        #expect(run.output.contains("untouched"), "\(run.output)")
        #expect(try String(contentsOfFile: notes, encoding: .utf8) == "my notes\n")
    }

    @Test func aDirectoryAtTheSocketPathIsLeftUntouchedAndTheDaemonRefuses() throws {
        let directory = try TempDirectory("attack-dir")
        let target = directory.path + "/not-a-socket"
        try FileManager.default.createDirectory(atPath: target + "/inside", withIntermediateDirectories: true)
        let run = try DaemonRun.once(socket: target, directory: directory.path)
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("a directory there"), "\(run.output)")
        #expect(FileManager.default.fileExists(atPath: target + "/inside"))
    }

    @Test func aLiveSocketIsNotStolen() throws {
        let directory = try TempDirectory("attack-live")
        let first = ChildDaemon(directory: directory.path)
        try first.start()
        defer { first.killHard() }
        let run = try DaemonRun.once(socket: first.socketPath, directory: directory.path + "/second")
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("another userlistd is already answering"), "\(run.output)")
        let client = try FaultClient(path: first.socketPath)
        defer { client.disconnect() }
        #expect(try client.hello(key: "still-the-first").access == .readWrite)
    }

    // MARK: the socket's directory (finding 1)

    @Test(.enabled(if: isRoot && hasSetpriv, asOtherUID))
    func aDirectoryOwnedByAnotherUserIsRefused() throws {
        let directory = try TempDirectory("attack-owner")
        chmod(directory.path, 0o755)
        let planted = directory.path + "/planted"
        mkdir(planted, 0o777)
        chmod(planted, 0o777)
        chown(planted, Attacker.uid, Attacker.uid)
        let run = try DaemonRun.once(socket: planted + "/userlistd.sock", directory: directory.path)
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("belongs to uid \(Attacker.uid)"), "\(run.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: planted).isEmpty, "nothing was put in the attacker's directory")
    }

    @Test(.enabled(if: isRoot && hasSetpriv, asOtherUID))
    func thePerUserFallbackDirectoryMustBeTheUsersOwn() throws {
        let victim = Victim()
        defer { victim.cleanUp() }
        let fallback = victim.fallback

        // Planted by another user: refused.
        mkdir(fallback, 0o777)
        chmod(fallback, 0o777)
        chown(fallback, Attacker.uid, Attacker.uid)
        var run = try victim.runOnce()
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("belongs to uid \(Attacker.uid)"), "\(run.output)")
        #expect(run.output.contains("XDG_RUNTIME_DIR"), "the message says how to fix it: \(run.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: fallback).isEmpty)
        rmdir(fallback)

        // A symlink planted at the predictable path, even to a directory the victim owns: refused.
        let target = victim.home + "/elsewhere"
        mkdir(target, 0o700)
        chown(target, victim.uid, victim.uid)
        symlink(target, fallback)
        lchown(fallback, Attacker.uid, Attacker.uid)
        run = try victim.runOnce()
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("symbolic link"), "\(run.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: target).isEmpty)
        unlink(fallback)

        // The victim's own, but open to others: refused with the chmod to run.
        mkdir(fallback, 0o755)
        chmod(fallback, 0o755)
        chown(fallback, victim.uid, victim.uid)
        run = try victim.runOnce()
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("chmod 700"), "\(run.output)")
        rmdir(fallback)

        // Absent: created 0700 by the victim, who listens there.
        let daemon = try victim.start()
        defer { daemon.terminate(); daemon.waitUntilExit() }
        var status = stat()
        #expect(lstat(fallback, &status) == 0)
        #expect(status.st_uid == victim.uid)
        #expect(status.st_mode & 0o7777 == 0o700)
        #expect(status.st_mode & S_IFMT == S_IFDIR)
    }

    // MARK: file modes (finding 3)

    @Test func filesAre0600AndDirectories0700WhateverTheUmask() throws {
        let directory = try TempDirectory("attack-modes")
        let storeDirectory = directory.path + "/store"
        let previous = umask(0o022)
        let daemon = ChildDaemon(directory: directory.path, databasePath: storeDirectory + "/users.sqlite3")
        defer { daemon.killHard() }
        do {
            defer { umask(previous) }
            try daemon.start()
        }
        let client = try FaultClient(path: daemon.socketPath)
        try client.hello(key: "drafts")
        client.disconnect()
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 120) == 0, "\(daemon.log)")

        func mode(_ path: String) -> mode_t? {
            var status = stat()
            return lstat(path, &status) == 0 ? status.st_mode & 0o7777 : nil
        }
        #expect(mode(storeDirectory) == 0o700)
        #expect(mode(storeDirectory + "/users.sqlite3") == 0o600)
        #expect(mode(daemon.stateDirectory) == 0o700)
        let saved = try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory)
        #expect(!saved.isEmpty, "the session was saved")
        for file in saved { #expect(mode(daemon.stateDirectory + "/" + file) == 0o600, "\(file)") }
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: storeDirectory + "/users.sqlite3" + suffix) {
            #expect(mode(storeDirectory + "/users.sqlite3" + suffix) == 0o600)
        }
    }

    @Test(.enabled(if: isRoot && hasSetpriv, asOtherUID))
    func anotherUserCannotReachRootsSocketOutsideTheGroup() throws {
        let directory = try TempDirectory("attack-reach")
        chmod(directory.path, 0o755)
        let daemon = ChildDaemon(directory: directory.path)
        try daemon.start()
        defer { daemon.killHard() }
        var status = stat()
        #expect(lstat(daemon.socketPath, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o660)
        let probe = Shell.run("setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/python3", "-c",
                                          "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])", daemon.socketPath])
        #expect(probe.status != 0)
        #expect(probe.output.contains("PermissionError"), "\(probe.output)")
    }

    // MARK: hostile input over the wire (findings 4, 5, 7, 10)

    @Test func controlAndBidiNamesAreRejectedOverTheWire() throws {
        let directory = try TempDirectory("attack-names")
        let daemon = ChildDaemon(directory: directory.path)
        try daemon.start()
        defer { daemon.killHard() }
        let client = try FaultClient(path: daemon.socketPath)
        defer { client.disconnect() }
        try client.hello(key: "hostile")
        for name in ["\u{1B}]0;PWNED\u{07}\u{1B}[2J", "evil\u{202E}gnp.exe", "tab\there", "line\nbreak", "c1\u{9B}31m"] {
            let reply = try client.intent("list", "add_user", ["name": .string(name), "email": "hostile@example.com"])
            guard case .failure(let body) = reply.outcome else {
                Issue.record("accepted \(name.debugDescription)")
                continue
            }
            #expect(body.code == .validation)
            #expect(body.message.contains("control character"), "\(body.message)")
        }
    }

    @Test func aOneMegabyteCombiningMarkNameIsRejected() throws {
        let directory = try TempDirectory("attack-zalgo")
        let daemon = ChildDaemon(directory: directory.path)
        try daemon.start()
        defer { daemon.killHard() }
        let client = try FaultClient(path: daemon.socketPath)
        defer { client.disconnect() }
        try client.hello(key: "zalgo")
        let name = "!" + String(repeating: "\u{301}", count: 450_000)
        let reply = try client.intent("list", "add_user", ["name": .string(name), "email": "zalgo@example.com"], timeout: 120)
        guard case .failure(let body) = reply.outcome else {
            Issue.record("a 900 KB name was accepted")
            return
        }
        #expect(body.code == .validation)
        #expect(body.message.contains("bytes long; at most 800"), "\(body.message)")
        // The daemon still serves everyone.
        let other = try FaultClient(path: daemon.socketPath)
        defer { other.disconnect() }
        #expect(try other.hello(key: "bystander").access == .readWrite)
    }

    @Test func aDuplicateEmailIsAValidationErrorNamingTheOtherUser() throws {
        let directory = try TempDirectory("attack-email")
        let daemon = ChildDaemon(directory: directory.path)
        try daemon.start()
        defer { daemon.killHard() }
        let client = try FaultClient(path: daemon.socketPath)
        defer { client.disconnect() }
        try client.hello(key: "emails")
        let added = try client.intent("list", "add_user", ["name": "Ada Original", "email": "ada.original@example.com"])
        guard case .success = added.outcome else {
            Issue.record("the first add failed: \(added)")
            return
        }
        let clash = try client.intent("list", "add_user", ["name": "Ada Copy", "email": "ADA.Original@Example.com"])
        guard case .failure(let body) = clash.outcome else {
            Issue.record("a duplicate email was accepted")
            return
        }
        #expect(body.code == .validation, "retrying cannot help: not a conflict")
        #expect(body.message.contains("Ada Original"), "\(body.message)")
        let badAvatar = try client.intent("list", "add_user", ["name": "Ada", "email": "ada.avatar@example.com", "avatar_url": "not a url"])
        guard case .failure(let avatarBody) = badAvatar.outcome else {
            Issue.record("'not a url' was accepted as an avatar")
            return
        }
        #expect(avatarBody.code == .validation)
    }

    @Test func anOversizeSessionKeyIsRefused() throws {
        let directory = try TempDirectory("attack-key")
        let daemon = ChildDaemon(directory: directory.path)
        try daemon.start()
        defer { daemon.killHard() }
        let client = try FaultClient(path: daemon.socketPath)
        defer { client.disconnect() }
        client.send(client.helloMessage(key: String(repeating: "k", count: 100_000)))
        let error = try client.next(where: "an error") { message -> ServerMessage.ErrorMessage? in
            if case .error(let error) = message { return error }
            return nil
        }
        #expect(error.code == .invalidMessage)
        #expect(error.message.contains("128 bytes"), "\(error.message)")
        let fine = try FaultClient(path: daemon.socketPath)
        defer { fine.disconnect() }
        #expect(try fine.hello(key: String(repeating: "k", count: 128)).access == .readWrite)
    }
}

/// The other local user of these attacks: a uid with no account, owning what it planted.
enum Attacker {
    static let uid: uid_t = 54_321
}

/// A local user (an unused uid) whose per-user daemon falls back to `/tmp/userlistd-<uid>`.
final class Victim: @unchecked Sendable {
    // Invariant: used by one test at a time.
    let uid: uid_t = 50_000 + uid_t(getpid() % 4_000)
    let home: String
    var fallback: String { "/tmp/userlistd-\(uid)" }

    init() {
        home = "/tmp/userlistd-victim-\(UUID().uuidString.prefix(8))"
        mkdir(home, 0o755)
        chmod(home, 0o755)
        chown(home, uid, uid)
        _ = FileManager.default.createFile(atPath: home + "/empty.conf", contents: Data())
        removeFallback()
    }

    private func removeFallback() {
        var status = stat()
        guard lstat(fallback, &status) == 0 else { return }
        if status.st_mode & S_IFMT == S_IFDIR { try? FileManager.default.removeItem(atPath: fallback) } else { unlink(fallback) }
    }

    private var arguments: [String] {
        ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", DaemonRun.binary,
         "--config", home + "/empty.conf", "--database", home + "/users.sqlite3", "--state-directory", home + "/state",
         "--log-level", "warning"]
    }

    private var environment: [String: String] {
        ["HOME": home, "PATH": "/usr/bin:/bin"]  // no XDG_RUNTIME_DIR: the fallback is used
    }

    func runOnce() throws -> (status: Int32?, output: String) {
        try DaemonRun.run("/usr/bin/setpriv", arguments, environment: environment, logPath: home + "/run.log")
    }

    /// Starts the daemon and returns once its fallback socket answers.
    func start() throws -> Process {
        let process = try DaemonRun.launch("/usr/bin/setpriv", arguments, environment: environment, logPath: home + "/daemon.log")
        let socket = fallback + "/userlistd.sock"
        if let fd = firstConnection(timeout: 30, every: .milliseconds(20), givesUp: { !process.isRunning },
                                    { try RawSocket.connect(socket) }) {
            close(fd)
            return process
        }
        process.terminate()
        process.waitUntilExit()
        throw FaultFailure("the victim's daemon did not answer on \(socket): \((try? String(contentsOfFile: home + "/daemon.log", encoding: .utf8)) ?? "")")
    }

    func cleanUp() {
        removeFallback()
        try? FileManager.default.removeItem(atPath: home)
    }
}

/// Runs `userlistd` as a child that is expected to refuse, and collects what it said.
enum DaemonRun {
    static var binary: String { Repo.daemonBinary }

    /// The daemon on `socket`, with a store of its own under `directory`.
    static func once(socket: String, directory: String) throws -> (status: Int32?, output: String) {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: directory + "/empty.conf", contents: Data())
        return try run(binary, ["--config", directory + "/empty.conf", "--socket", socket,
                                "--database", directory + "/refused.sqlite3", "--state-directory", directory + "/refused-state"],
                       environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LISTEN_") && $0.key != "NOTIFY_SOCKET" },
                       logPath: directory + "/refused.log")
    }

    static func launch(_ executable: String, _ arguments: [String], environment: [String: String], logPath: String) throws -> Process {
        guard access(binary, X_OK) == 0 else { throw FaultFailure("\(binary) is missing: run `swift build` first") }
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(forWritingAtPath: logPath)
        process.standardError = FileHandle(forWritingAtPath: logPath)
        try process.run()
        return process
    }

    /// Waits up to 30 s for the exit; a daemon still running then is stopped and nil returned.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String],
                    logPath: String) throws -> (status: Int32?, output: String) {
        let process = try launch(executable, arguments, environment: environment, logPath: logPath)
        _ = process.waitForExit(timeout: 30)
        var status: Int32?
        if process.isRunning {
            process.terminate()
        } else {
            status = process.terminationStatus
        }
        process.waitUntilExit()
        return (status, (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")
    }
}
