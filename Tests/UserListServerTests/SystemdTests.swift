// Runs the built daemon the way systemd does: notify socket and watchdog, socket activation,
// the journal, and the units themselves. Needs `swift build` first (.build/debug/userlistd) and
// systemd's tools (scripts/setup.sh installs them); a test whose tool is missing shows as skipped
// with the reason, never as a silent pass.
import Foundation
import Glibc
import Testing
import UserListTestSupport

@Suite(.childProcesses, .serialized, .timeLimit(.minutes(5)),
       .enabled(if: SystemdFixture.daemonBuilt, "needs .build/debug/userlistd: run 'swift build' before 'swift test'"))
struct SystemdTests {
    // MARK: (a) sd_notify order

    @Test func notifiesReadyWatchdogReloadingReadyStoppingInOrder() throws {
        let binary = try #require(SystemdFixture.daemonBinary())
        let directory = try SystemdFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let notify = try NotifySocket(path: directory + "/notify.sock")
        defer { notify.close() }

        let daemon = try SystemdFixture.launch(binary, arguments: SystemdFixture.daemonArguments(in: directory),
                                               environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "400000"])
        defer { SystemdFixture.kill(daemon) }

        var kinds: [String] = []
        func receive(until wanted: String, timeout: Double = generousDeadline) throws {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                guard let datagram = notify.receive() else { continue }
                let lines = datagram.split(separator: "\n").map(String.init)
                let kind: String
                if lines.contains("READY=1") {
                    kind = "READY"
                    #expect(lines.contains { $0.hasPrefix("STATUS=") }, "READY=1 comes with STATUS=: \(lines)")
                } else if lines.contains("RELOADING=1") {
                    kind = "RELOADING"
                    #expect(lines.contains { $0.hasPrefix("MONOTONIC_USEC=") && UInt64($0.dropFirst(15)) != nil },
                            "RELOADING=1 comes with MONOTONIC_USEC=: \(lines)")
                } else if lines.contains("WATCHDOG=1") {
                    kind = "WATCHDOG"
                } else if lines.contains("STOPPING=1") {
                    kind = "STOPPING"
                } else if lines.allSatisfy({ $0.hasPrefix("STATUS=") }) {
                    continue
                } else {
                    kind = "OTHER(\(lines.joined(separator: ",")))"
                }
                kinds.append(kind)
                if kind == wanted { return }
            }
            Issue.record("no \(wanted) within \(timeout)s; got \(kinds)")
            throw SystemdFixture.Failure("timeout waiting for \(wanted)")
        }

        try receive(until: "READY")
        try receive(until: "WATCHDOG")  // WATCHDOG_USEC=400000: a ping within about 200 ms
        Glibc.kill(daemon.processIdentifier, SIGHUP)
        try receive(until: "RELOADING")
        try receive(until: "READY")
        Glibc.kill(daemon.processIdentifier, SIGTERM)
        try receive(until: "STOPPING")
        SystemdFixture.wait(daemon, timeout: generousDeadline)
        #expect(daemon.terminationReason == .exit)
        #expect(daemon.terminationStatus == 0)

        // Pings keep coming every 200 ms; only the first one is part of the story.
        var seenWatchdog = false
        let story = kinds.filter { kind in
            guard kind == "WATCHDOG" else { return true }
            defer { seenWatchdog = true }
            return !seenWatchdog
        }
        #expect(story == ["READY", "WATCHDOG", "RELOADING", "READY", "STOPPING"], "all: \(kinds)")
    }

    // MARK: (b) socket activation

    @Test(.enabled(if: SystemdFixture.tool("systemd-socket-activate") != nil,
                   "systemd-socket-activate is not installed (scripts/setup.sh installs the systemd package)"))
    func servesASocketPassedBySystemdSocketActivate() throws {
        let binary = try #require(SystemdFixture.daemonBinary())
        let activate = try #require(SystemdFixture.tool("systemd-socket-activate"))
        let directory = try SystemdFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socketPath = directory + "/activated.sock"
        // No --socket: the daemon must use the passed fd, not create its own path.
        let arguments = ["-l", socketPath, binary, "--config", directory + "/empty.conf",
                         "--database", directory + "/users.sqlite3", "--state-directory", directory + "/state"]
        let activator = try SystemdFixture.launch(activate, arguments: arguments, environment: [:])
        defer { SystemdFixture.kill(activator) }

        let fd = try SystemdFixture.connect(to: socketPath, timeout: generousDeadline)
        defer { Glibc.close(fd) }
        var timeout = timeval(tv_sec: Int(generousDeadline), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let hello = #"{"type":"hello","protocol":{"min":1,"max":1},"client":{"name":"t","build":"0"},"session_key":"k"}"#
        try SystemdFixture.writeFrame(Array(hello.utf8), to: fd)
        let frame = try SystemdFixture.readFrame(from: fd)
        let object = try JSONSerialization.jsonObject(with: Data(frame)) as? [String: Any]
        #expect(object?["type"] as? String == "welcome", "got \(String(decoding: frame, as: UTF8.self))")

        // systemd-socket-activate execs the daemon in its own process on the first connection.
        Glibc.kill(activator.processIdentifier, SIGTERM)
        SystemdFixture.wait(activator, timeout: generousDeadline)
        #expect(activator.terminationReason == .exit)
        #expect(activator.terminationStatus == 0)
    }

    // MARK: (c) the journal

    @Test(.enabled(if: SystemdFixture.tool("journalctl") != nil && SystemdFixture.journalReachable,
                   "needs journalctl and a journald: one listening on /run/systemd/journal/socket, or root and /usr/lib/systemd/systemd-journald to start one"))
    func logsStructuredFieldsToTheJournalWhenStderrIsTheJournalStream() throws {
        let binary = try #require(SystemdFixture.daemonBinary())
        let journalctl = try #require(SystemdFixture.tool("journalctl"))
        let journalSocket = "/run/systemd/journal/socket"
        var journald: Process?
        defer { if let journald { SystemdFixture.kill(journald) } }
        if !SystemdFixture.datagramSocketAnswers(journalSocket) {
            let path = "/usr/lib/systemd/systemd-journald"
            try #require(FileManager.default.isExecutableFile(atPath: path) && getuid() == 0,
                         "no journald is listening and we cannot start one (\(path), root)")
            try FileManager.default.createDirectory(atPath: "/run/systemd/journal", withIntermediateDirectories: true)
            journald = try SystemdFixture.launch(path, arguments: [], environment: [:])
            guard eventually({ SystemdFixture.datagramSocketAnswers(journalSocket) }) else {
                Issue.record("the journald we started does not listen on \(journalSocket)")
                return
            }
        }

        let directory = try SystemdFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The daemon trusts JOURNAL_STREAM only when it names its own stderr: give it a file and its dev:ino.
        let stderrPath = directory + "/stderr"
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        var info = stat()
        #expect(stat(stderrPath, &info) == 0)
        let socketPath = directory + "/journal-test.sock"  // unique: it finds our entry again
        var arguments = SystemdFixture.daemonArguments(in: directory)
        arguments[arguments.firstIndex(of: "--socket")! + 1] = socketPath
        let daemon = try SystemdFixture.launch(
            binary, arguments: arguments,
            environment: ["JOURNAL_STREAM": "\(UInt64(info.st_dev)):\(UInt64(info.st_ino))"],
            stderr: FileHandle(forWritingAtPath: stderrPath))
        defer { SystemdFixture.kill(daemon) }

        var entry: [String: Any]?
        eventually(every: .milliseconds(200)) {  // polls the journal for the entry; the deadline decides only a hang
            let output = SystemdFixture.run(journalctl, ["-o", "json", "--no-pager",
                                                         "SYSLOG_IDENTIFIER=userlistd", "USERLISTD_SOCKET=\(socketPath)"])
            entry = output.split(separator: "\n")
                .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .first { ($0["MESSAGE"] as? String)?.contains("ready") == true }
            return entry != nil
        }
        Glibc.kill(daemon.processIdentifier, SIGTERM)
        SystemdFixture.wait(daemon, timeout: generousDeadline)
        #expect(daemon.terminationStatus == 0)

        let found = try #require(entry, "no 'ready' entry with USERLISTD_SOCKET=\(socketPath) in the journal")
        #expect(found["PRIORITY"] as? String == "5")
        #expect((found["CODE_FILE"] as? String)?.isEmpty == false)
        #expect(Int(found["CODE_LINE"] as? String ?? "") != nil)
        #expect(found["USERLISTD_SOCKET"] as? String == socketPath)
        #expect(found["USERLISTD_STORE"] as? String == "sqlite:\(directory)/users.sqlite3")
        // Nothing went to the plain stderr once the journal was chosen.
        #expect((try? String(contentsOfFile: stderrPath, encoding: .utf8)) == "")
    }

    // MARK: (d) the units

    @Test(.enabled(if: SystemdFixture.tool("systemd-analyze") != nil,
                   "systemd-analyze is not installed (scripts/setup.sh installs the systemd package)"))
    func unitsPassSystemdAnalyzeVerify() throws {
        try #require(SystemdFixture.daemonBinary() != nil)
        let root = SystemdFixture.repositoryRoot
        let process = Process()
        process.executableURL = URL(fileURLWithPath: root + "/scripts/systemd-verify.sh")
        process.arguments = [root + "/.build/debug"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        #expect(output.contains("Overall exposure level"), "\(output)")
    }
}

// MARK: - Fixture

enum SystemdFixture {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// This file is Tests/UserListServerTests/SystemdTests.swift.
    static let repositoryRoot: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static var daemonBuilt: Bool { FileManager.default.isExecutableFile(atPath: repositoryRoot + "/.build/debug/userlistd") }

    /// A journald listens, or this process may start one.
    static var journalReachable: Bool {
        datagramSocketAnswers("/run/systemd/journal/socket")
            || (FileManager.default.isExecutableFile(atPath: "/usr/lib/systemd/systemd-journald") && getuid() == 0)
    }

    static func daemonBinary() -> String? {
        let path = repositoryRoot + "/.build/debug/userlistd"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            return nil
        }
        return path
    }

    static func tool(_ name: String) -> String? {
        for directory in ["/usr/bin", "/bin", "/usr/sbin", "/usr/local/bin"] {
            let path = directory + "/" + name
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Short, because sun_path holds 108 bytes.
    static func temporaryDirectory() throws -> String {
        var template = Array("/tmp/uls-sd-XXXXXX".utf8CString)
        let made: String? = template.withUnsafeMutableBufferPointer { buffer in
            mkdtemp(buffer.baseAddress!).map { String(cString: $0) }
        }
        guard let path = made else { throw Failure("mkdtemp: errno \(errno)") }
        _ = FileManager.default.createFile(atPath: path + "/empty.conf", contents: Data())
        return path
    }

    static func daemonArguments(in directory: String) -> [String] {
        ["--config", directory + "/empty.conf", "--socket", directory + "/userlistd.sock",
         "--database", directory + "/users.sqlite3", "--state-directory", directory + "/state",
         "--sample-data", "5"]
    }

    /// A child with a clean environment: nothing of the test runner's systemd variables leaks in.
    static func launch(_ executable: String, arguments: [String], environment: [String: String],
                       stderr: FileHandle? = nil) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ["PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": NSTemporaryDirectory()]
        env.merge(environment) { $1 }
        process.environment = env
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderr ?? FileHandle.nullDevice
        try process.run()
        return process
    }

    static func wait(_ process: Process, timeout: Double) {
        if !process.waitForExit(timeout: timeout) { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Leaves nothing running: SIGKILL when still alive, then reap.
    static func kill(_ process: Process) {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    static func run(_ executable: String, _ arguments: [String]) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return "" }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    static func connect(_ fd: Int32, _ path: String) -> Int32 {
        var address = address(path)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }

    /// Whether something is bound to a datagram socket at `path` (a stale inode refuses).
    static func datagramSocketAnswers(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return connect(fd, path) == 0
    }

    static func connect(to path: String, timeout: Double) throws -> Int32 {
        func attempt() throws -> Int32 {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw Failure("socket: errno \(errno)") }
            if connect(fd, path) == 0 { return fd }
            let code = errno
            close(fd)
            throw Failure("cannot connect to \(path): errno \(code)")
        }
        // Past the deadline, one last attempt throws why it cannot connect.
        return try firstConnection(timeout: timeout, every: .milliseconds(50), attempt) ?? attempt()
    }

    static func writeFrame(_ body: [UInt8], to fd: Int32) throws {
        let length = UInt32(body.count)
        let bytes = [UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)] + body
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written > 0 else { throw Failure("write: errno \(errno)") }
            offset += written
        }
    }

    static func readExactly(_ count: Int, from fd: Int32) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let got = buffer[offset...].withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard got > 0 else { throw Failure("read: \(got == 0 ? "end of stream" : "errno \(errno)")") }
            offset += got
        }
        return buffer
    }

    static func readFrame(from fd: Int32) throws -> [UInt8] {
        let header = try readExactly(4, from: fd)
        let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        return try readExactly(length, from: fd)
    }
}

/// The NOTIFY_SOCKET end: a bound AF_UNIX datagram socket that reads with a short timeout.
final class NotifySocket {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemdFixture.Failure("socket: errno \(errno)") }
        var address = SystemdFixture.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw SystemdFixture.Failure("bind \(path): errno \(errno)") }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// One datagram, or nil after the timeout.
    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    func close() {
        Glibc.close(fd)
        unlink(path)
    }
}
