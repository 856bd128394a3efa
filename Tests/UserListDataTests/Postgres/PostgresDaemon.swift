import Foundation
import Glibc
import UserListTestSupport

/// A real `userlistd` child process whose store is a PostgreSQL database, on its own temporary
/// directory and socket; and `userctl` runs against it.
final class PostgresDaemon: @unchecked Sendable {  // Invariant: used by one test's task at a time.
    let directory: String
    let socketPath: String
    let database: String
    private var process: Process?
    /// The daemon's stderr: its log.
    private let stderr = CapturedOutput()

    /// Starts the process without waiting for it (see `waitUntilAnswering`).
    init(database: String, sampleData: Int = 0, environment: [String: String] = [:]) throws {
        directory = "/tmp/ulpgd-" + String(UUID().uuidString.prefix(8))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        socketPath = directory + "/sock"
        self.database = database
        guard let products = RealDaemon.productsDirectory else { throw RealDaemon.Failure("userlistd is not built") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: products + "/userlistd")
        process.arguments = ["--socket", socketPath, "--database", database, "--state-directory", directory + "/state",
                             "--sample-data", String(sampleData), "--log-level", "debug"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardError = stderr.writingEnd
        try process.run()
        try? stderr.writingEnd.close()
        self.process = process
    }

    func waitUntilAnswering(timeout: Duration = .seconds(30)) async throws {
        // "userlistd <version> ready" is logged once it listens; the log ends early if it exits.
        let stderr = stderr
        if await stderr.sees({ RealDaemon.saysReady(stderr.text) || stderr.hasEnded }) {
            if RealDaemon.saysReady(stderr.text) { return }
            throw RealDaemon.Failure("userlistd exited: \(log())")
        }
        throw RealDaemon.Failure("userlistd did not answer on \(socketPath) within \(timeout): \(log())")
    }

    var isRunning: Bool { process?.isRunning ?? false }

    /// SIGKILL, as a crash would: no goodbye, no clean disconnect from PostgreSQL.
    func kill9() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGSTOP: the process hears nothing (its feed included) until `resume()`.
    func pause() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGSTOP)
    }

    func resume() {
        guard let process else { return }
        kill(process.processIdentifier, SIGCONT)
    }

    func log() -> String { stderr.text }

    /// SIGTERM, wait, remove the directory. Call at the end of every test (`defer`).
    func tearDown() {
        if let process {
            resume()  // a paused process would never act on SIGTERM
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        process = nil
        try? FileManager.default.removeItem(atPath: directory)
    }

    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs `userctl --socket <this daemon> --no-spawn <arguments>` to completion.
    func userctl(_ arguments: [String]) throws -> Run {
        guard let products = RealDaemon.productsDirectory else { throw RealDaemon.Failure("userctl is not built") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: products + "/userctl")
        process.arguments = ["--socket", socketPath, "--no-spawn"] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                   stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// `userctl watch --json` in the background, its output read as it arrives (`output()`);
    /// attached to session `session` when given (keeping it alive: a one-shot `userctl` ends
    /// the session it used unless another client is attached).
    func watch(session: String? = nil) throws -> Watch { try Watch(self, session: session) }

    final class Watch: @unchecked Sendable {  // Invariant: `process` is set in init, then only read.
        private let process: Process
        private let stdout = CapturedOutput()

        init(_ daemon: PostgresDaemon, session: String?) throws {
            guard let products = RealDaemon.productsDirectory else { throw RealDaemon.Failure("userctl is not built") }
            process = Process()
            process.executableURL = URL(fileURLWithPath: products + "/userctl")
            process.arguments = ["--socket", daemon.socketPath, "--no-spawn"] + (session.map { ["--session", $0] } ?? []) + ["watch", "--json"]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = stdout.writingEnd
            process.standardError = FileHandle.nullDevice
            try process.run()
            try? stdout.writingEnd.close()
        }

        func output() -> String { stdout.text }

        /// Waits until the output satisfies `condition`, re-checked as each piece arrives.
        func wait(until condition: (String) -> Bool) async -> Bool { await stdout.sees { condition(output()) } }

        func stop() {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
    }
}
