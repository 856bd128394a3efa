import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire

/// A daemon out of file descriptors: the connection it cannot take is told why and closed
/// (it used to wait in the backlog while the loop spun on the listening socket and logged each
/// turn), the clients it has keep working, and it accepts again once descriptors come free.
@Suite(.childProcesses, .serialized,
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit"), "needs prlimit (util-linux)"))
struct DescriptorExhaustionTests {
    @Test func aConnectionPastTheDescriptorLimitIsToldWhyAndTheDaemonRecovers() throws {
        let directory = try TempDirectory("descriptors")
        // No session journal: it opens its file from a lowest-priority thread, which a busy
        // machine may run seconds after the daemon listens, and that descriptor would then take
        // one of those counted below as room for clients.
        let daemon = ChildDaemon(directory: directory.path, extra: ["--session-journal-interval", "0"])
        defer {
            daemon.killHard()
            directory.remove()
        }
        try daemon.start()
        // Room for a few connections more than the daemon holds now.
        let limit = daemon.openDescriptorCount + 6
        let set = Shell.run("prlimit", ["--pid", String(daemon.pid), "--nofile=\(limit):\(limit)"])
        try #require(set.status == 0, "prlimit failed: \(set.output)")

        var held: [FaultClient] = []
        var refusal: ServerMessage.ErrorMessage?
        for index in 0..<64 where refusal == nil {
            let client = try FaultClient(path: daemon.socketPath)
            client.send(client.helloMessage(key: "descriptors-\(index)"))
            let first: ServerMessage
            do {
                first = try client.next(where: "welcome or an error") { message -> ServerMessage? in
                    switch message {
                    case .welcome, .error: message
                    default: nil
                    }
                }
            } catch {
                Issue.record("connection \(index) of a limit of \(limit): \(error); the daemon's log: \(daemon.log)")
                return
            }
            if case .error(let error) = first {
                refusal = error
                #expect(client.drainUntilClosed(timeout: generousDeadline), "the refused connection stays open")
            } else {
                held.append(client)
            }
        }
        let error = try #require(refusal, "64 connections were all taken with a limit of \(limit) descriptors")
        try #require(!held.isEmpty, "the first connection was refused with a limit of \(limit) descriptors: \(Self.descriptors(of: daemon.pid))")
        #expect(error.code == .tooManyConnections)
        #expect(error.message.contains("file descriptors"), "\(error.message)")

        // The clients it holds still work.
        let reply = try held[0].intent("list", "refresh")
        guard case .success = reply.outcome else {
            Issue.record("a held client's intent failed: \(reply.outcome)")
            return
        }

        // Once some close, new clients are served again.
        for client in held.suffix(3) { client.disconnect() }
        // (The daemon frees their descriptors when it sees them close: until then it may still
        // refuse, so the test asks again until the deadline.)
        let retryUntil = Date().addingTimeInterval(generousDeadline)
        var welcome: ServerMessage.Welcome?
        while welcome == nil && Date() < retryUntil {
            let client = try FaultClient(path: daemon.socketPath)
            welcome = try? client.hello(key: "descriptors-again")
            if welcome == nil { usleep(20_000) }
        }
        #expect(welcome != nil, """
            no connection was served after \(min(3, held.count)) of \(held.count) clients closed; \
            the daemon's descriptors: \(Self.descriptors(of: daemon.pid)); its log: \(daemon.log)
            """)
        #expect(daemon.isRunning)

        // Told once when it ran out and once when it recovered; not once per turn of the loop.
        let outOf = daemon.wholeLog.components(separatedBy: "Out of file descriptors").count - 1
        #expect(outOf >= 1 && outOf <= 3, "logged 'Out of file descriptors' \(outOf) times")
    }

    /// What each of a process's descriptors points at (for a failure message: what holds the
    /// descriptors the daemon is short of).
    static func descriptors(of pid: Int32) -> [String] {
        let directory = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }.map { name in
            "\(name) → " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + name)) ?? "?")
        }
    }

    /// Started with a low soft limit (systemd's default is 1,024; here 256, under a hard limit of
    /// 8,192), the daemon lifts it to the hard one (`Daemon.raiseFileLimit`): one descriptor per
    /// client.
    @Test func theDaemonRaisesItsSoftDescriptorLimitToTheHardLimit() throws {
        let directory = try TempDirectory("nofile")
        let config = directory.path + "/empty.conf"
        _ = FileManager.default.createFile(atPath: config, contents: Data())
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        process.arguments = ["--nofile=256:8192", "--", Repo.daemonBinary, "--config", config,
                             "--socket", directory.path + "/d.sock", "--database", directory.path + "/users.sqlite3",
                             "--state-directory", directory.path + "/state", "--sample-data", "0", "--log-level", "warning"]
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LISTEN_") && $0.key != "NOTIFY_SOCKET" }
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
            directory.remove()
        }
        // prlimit execs the daemon: same pid. Wait until it listens (its limit is raised before).
        let connected = firstConnection(timeout: generousDeadline, givesUp: { !process.isRunning }) {
            try RawSocket.connect(directory.path + "/d.sock")
        }
        if let connected { close(connected) }
        let listening = connected != nil
        try #require(listening, "the daemon did not start")
        let limits = try String(contentsOfFile: "/proc/\(process.processIdentifier)/limits", encoding: .utf8)
        let line = limits.split(separator: "\n").first { $0.hasPrefix("Max open files") }.map(String.init) ?? ""
        let numbers = line.split(separator: " ").compactMap { Int($0) }
        #expect(numbers == [8192, 8192], "\(line)")
    }
}
