import Foundation
import Glibc

/// A real `userlistd` child process on a temporary directory, for tests that need the daemon.
///
/// The binaries are found next to the test bundle (`.build/<triple>/debug/`), so run
/// `swift build && swift test`: a test target cannot depend on an executable.
package final class RealDaemon: @unchecked Sendable {
    // Invariant: used from one test's task at a time; `process` changes only in start/stop.
    package let directory: String
    package let socketPath: String
    package let sampleData: Int
    /// More flags for the daemon (e.g. `--session-journal-interval 0`).
    package let extraArguments: [String]
    private var process: Process?
    /// The running daemon's stderr: its log.
    private var stderr: CapturedOutput?

    /// The build products directory, or `nil` when userlistd has not been built.
    package static var productsDirectory: String? {
        var candidates: [String] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append((exe as NSString).deletingLastPathComponent)
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug").path)
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0 + "/userlistd") }
    }

    package static var skipReason: String? {
        productsDirectory == nil ? "userlistd is not built: run 'swift build' before 'swift test'" : nil
    }

    package init(sampleData: Int = 200, extraArguments: [String] = []) throws {
        self.extraArguments = extraArguments
        // mkdtemp: a fresh private directory per daemon, never one another test could share.
        var template = Array("/tmp/ulc-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw Failure("mkdtemp failed: errno \(errno)")
        }
        directory = String(cString: made)
        socketPath = directory + "/sock"
        self.sampleData = sampleData
        try start()
    }

    package func start() throws {
        guard let products = Self.productsDirectory else { throw Failure("userlistd is not built") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: products + "/userlistd")
        process.arguments = ["--socket", socketPath, "--database", directory + "/db",
                             "--state-directory", directory + "/state", "--sample-data", String(sampleData)] + extraArguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let stderr = CapturedOutput()
        process.standardError = stderr.writingEnd
        try process.run()
        try? stderr.writingEnd.close()
        self.process = process
        self.stderr = stderr
        // "userlistd <version> ready" is logged once it listens with its sessions in place; the
        // log ends early if it exits instead.
        if stderr.waitFor(timeout: generousDeadline, { Self.saysReady($0) || $1 }) {
            if Self.saysReady(stderr.text) { return }
            throw Failure("userlistd exited: \(log())")
        }
        process.terminate()  // never leave a daemon behind a failed start
        process.waitUntilExit()
        self.process = nil
        throw Failure("userlistd did not answer on \(socketPath) within \(Int(generousDeadline)) s: \(log())")
    }

    deinit { tearDown() }

    package func log() -> String { stderr?.text ?? "" }

    /// Whether `log` holds the daemon's "userlistd <version> ready" line (prefixed or not).
    package static func saysReady(_ log: String) -> Bool {
        log.split(separator: "\n").contains { line in
            let words = line.split(separator: " ")
            return words.indices.dropLast(2).contains { words[$0].hasSuffix("userlistd") && words[$0 + 2] == "ready" }
        }
    }

    /// The daemon's process id while it runs (for tests that kill it hard).
    package var pid: Int32? { process.map(\.processIdentifier) }

    /// SIGKILL and wait: a crash, with no chance to finish anything.
    package func kill9() {
        guard let process else { return }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        self.process = nil
    }

    /// SIGTERM and wait.
    package func stop() {
        guard let process else { return }
        if process.isRunning { process.terminate() }
        // SIGTERM first; a daemon that does not exit within the deadline is killed, so that a
        // hung daemon fails its test instead of hanging the whole run.
        if !process.waitForExit(timeout: generousDeadline) { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        self.process = nil
    }

    /// Stops the daemon and removes the directory; call at the end of every test.
    package func tearDown() {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    package static func answers(_ path: String) -> Bool {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }
}
