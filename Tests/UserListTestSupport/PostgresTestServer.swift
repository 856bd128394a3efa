import Foundation
import Glibc

/// One real PostgreSQL server per test process, in a temporary directory, listening only on a
/// Unix socket there (no TCP port to collide with): tests share it and each takes a database
/// of its own (`makeDatabase`), which keeps start-up cost (~1-2 s for initdb) to once per run.
///
/// The binaries come from `/usr/lib/postgresql/15/bin` (scripts/setup.sh installs them). When
/// the tests run as root, the server runs as the `postgres` user (`runuser`), which PostgreSQL
/// insists on. It is stopped at process exit (atexit) and, should the test process die
/// without running its exit handlers, by a small sidecar shell that watches the test process.
package final class PostgresTestServer: Sendable {
    package static let binaries = "/usr/lib/postgresql/15/bin"

    /// Why PostgreSQL tests cannot run here, or `nil` when they can.
    package static var skipReason: String? {
        for tool in ["initdb", "pg_ctl", "postgres", "psql"] where !FileManager.default.isExecutableFile(atPath: "\(binaries)/\(tool)") {
            return "PostgreSQL 15 is not installed (\(binaries)/\(tool) is missing): run scripts/setup.sh"
        }
        if getuid() == 0, getpwnam("postgres") == nil { return "running as root and there is no 'postgres' user to run the server as" }
        return nil
    }

    package static var isAvailable: Bool { skipReason == nil }

    /// The shared server, started on first use.
    package static func shared() throws -> PostgresTestServer {
        try lock.withLock {
            if let server = instance { return server }
            let server = try PostgresTestServer()
            instance = server
            atexit { PostgresTestServer.instance?.stop() }
            return server
        }
    }

    nonisolated(unsafe) private static var instance: PostgresTestServer?  // Guarded by `lock`.
    private static let lock = NSLock()

    /// The directory holding `data/` and the socket.
    package let directory: String
    package let port: Int
    private let runAs: [String]
    private let durable: Bool

    /// Connection string for `database` over the socket, as user `postgres` (trust auth).
    package func conninfo(_ database: String) -> String { "host=\(directory) port=\(port) user=postgres dbname=\(database)" }

    /// The same as a URI (the socket directory percent-encoded as `host`).
    package func uri(_ database: String) -> String {
        let host = directory.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? directory
        return "postgresql:///\(database)?host=\(host)&port=\(port)&user=postgres"
    }

    /// A server of its own, for a test that stops or restarts it (which would disturb the
    /// tests sharing `shared()`); call `tearDown()` at the end (a `defer`).
    /// `durable` keeps PostgreSQL's default `fsync=on` (the bench's figures); tests skip it.
    package static func makePrivate(durable: Bool = false) throws -> PostgresTestServer { try PostgresTestServer(durable: durable) }

    /// Stops the server and removes its directory.
    package func tearDown() {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private init(durable: Bool = false) throws {
        self.durable = durable
        directory = "/tmp/ulpg-" + String(UUID().uuidString.prefix(8))
        port = 20_000 + Int.random(in: 0..<20_000)
        runAs = getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] : []
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if getuid() == 0, let user = getpwnam("postgres") {
            chown(directory, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        try run(["\(Self.binaries)/initdb", "-D", "\(directory)/data", "-A", "trust", "-U", "postgres", "-E", "UTF8",
                 "--locale=C", "--no-sync"], "initdb")
        try start()
        watchParent()
    }

    /// Starts the server (again, after `stop` or `restart`), waiting until it accepts connections.
    package func start() throws {
        try run(["\(Self.binaries)/pg_ctl", "-D", "\(directory)/data", "-l", "\(directory)/server.log", "-w", "-t", "30",
                 "-o", "-k \(directory) -p \(port) -c listen_addresses=''\(durable ? "" : " -c fsync=off") -c max_connections=200", "start"],
                "pg_ctl start")
    }

    /// Stops the server fast (in-flight transactions roll back; committed ones stay).
    package func stop() {
        try? run(["\(Self.binaries)/pg_ctl", "-D", "\(directory)/data", "-m", "fast", "-w", "stop"], "pg_ctl stop")
    }

    /// A restart as an operator would do it: every connection is cut.
    package func restart() throws {
        stop()
        try start()
    }

    /// Creates an empty database with a fresh name and returns the name.
    package func makeDatabase() throws -> String {
        let name = "t_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        try psql("postgres", "CREATE DATABASE \(name)")
        return name
    }

    /// Runs SQL through psql and returns its unaligned output.
    @discardableResult
    package func psql(_ database: String, _ sql: String) throws -> String {
        try run(["\(Self.binaries)/psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", directory, "-p", String(port),
                 "-U", "postgres", "-d", database, "-c", sql], "psql", asServerUser: false)
    }

    package func log() -> String { (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? "" }

    /// Runs a command to completion with posix_spawn and waitpid (Foundation's `Process` can
    /// miss the exit of `pg_ctl`, whose server child lives on), output captured in a file.
    @discardableResult
    private func run(_ arguments: [String], _ what: String, asServerUser: Bool = true) throws -> String {
        let full = (asServerUser ? runAs : []) + arguments
        let outputPath = "\(directory)/command-\(UUID().uuidString.prefix(8)).out"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o666)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = full.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, full[0], &actions, nil, argv, environ)
        guard spawned == 0 else { throw RealDaemon.Failure("\(what): cannot start \(full[0]) (errno \(spawned))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        unlink(outputPath)
        let exitCode = (status >> 8) & 0xff
        guard status & 0x7f == 0, exitCode == 0 else {
            throw RealDaemon.Failure("\(what) failed (status \(status)): \(text)")
        }
        return text
    }

    /// A sidecar that stops the server and removes the directory once this process is gone.
    private func watchParent() {
        let script = """
            while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
            \(runAs.joined(separator: " ")) \(Self.binaries)/pg_ctl -D \(directory)/data -m immediate stop >/dev/null 2>&1
            rm -rf \(directory)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        _ = try? process.run()
    }
}
