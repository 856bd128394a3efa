import Foundation
import Glibc
import UserListData
import UserListDomain
import UserListServer
import UserListTestSupport

/// A real daemon in this process on a temporary socket, store and state directory.
final class DaemonHarness: @unchecked Sendable {
    // Invariant: set up in init, read afterwards; `task` is only touched by the test's own task.
    let directory: String
    let socketPath: String
    let databasePath: String
    private(set) var daemon: Daemon?
    /// What the daemon logged (the journal's fields included).
    let logger: Logger
    /// Beats after every line the daemon logs.
    let logged: Pulse
    private var task: Task<Int32, Never>?

    /// Pages shared between sessions through `SharedPageRepository`, as userlistd's composition
    /// root wires its SQLite store (so sessions showing the same page share its rows).
    let sharingPages: Bool

    init(sampleUsers: Int = 120, seed: UInt64 = 7, sharingPages: Bool = false,
         configure: (inout DaemonConfig) -> Void = { _ in }) async throws {
        self.sharingPages = sharingPages
        let logged = Pulse()
        self.logged = logged
        logger = Logger(sink: .observed { _ in logged.beat() }, level: .debug)
        directory = NSTemporaryDirectory() + "userlistd-test-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        socketPath = directory + "/s.sock"
        databasePath = directory + "/users.sqlite3"
        let repository = try SQLiteUserRepository(path: databasePath)
        _ = try await repository.importUsers(SampleUsers.generate(count: sampleUsers, seed: seed))
        try await start(configure: configure)
    }

    var config: DaemonConfig = DaemonConfig(socketPath: "", databasePath: "", stateDirectory: "")

    func start(configure: (inout DaemonConfig) -> Void = { _ in }) async throws {
        var config = DaemonConfig(socketPath: socketPath, databasePath: databasePath, stateDirectory: directory + "/state")
        // Rate limits lifted: how many intents or connects a test fits in a second depends on the
        // machine, so a limit would decide outcomes by speed. Tests of the limits set them back.
        config.intentsPerSecond = 1_000_000
        config.intentsPerSecondPerUID = 1_000_000
        config.connectionsPerSecondPerUID = 1_000_000
        configure(&config)
        self.config = config
        let repository = try SQLiteUserRepository(path: databasePath)
        let feed = try SQLiteChangeFeed(observing: repository)  // as userlistd's composition root does
        let store: Daemon.Store
        if sharingPages {
            let pages = SharedPageRepository(base: repository)
            store = Daemon.Store(repository: pages, feed: PageInvalidatingFeed(base: feed, pages: pages), description: "test",
                                 history: repository, close: { _ = feed })
        } else {
            store = Daemon.Store(repository: repository, feed: feed, description: "test", history: repository, close: { _ = feed })
        }
        let daemon = Daemon(config: config, logger: logger,
                            notifier: SystemdNotifier(environment: [:]), store: store, reloadConfig: { nil })
        self.daemon = daemon
        let readyBefore = readyLines
        task = Task { await daemon.run() }
        // Logged once the daemon listens, its loops run and its registry is in place.
        guard await logged.until({ readyLines > readyBefore }) else {
            throw WireTestClient.Timeout(waitingFor: "the daemon's ready line")
        }
    }

    /// How many times the daemon said it was ready (once per start).
    private var readyLines: Int {
        logger.entries.filter { $0.message.hasPrefix("userlistd ") && $0.message.hasSuffix(" ready") }.count
    }

    /// Stops like SIGTERM does; returns the exit status.
    @discardableResult
    func stop() async -> Int32 {
        daemon?.requestStop()
        let status = await task?.value ?? -1
        task = nil
        return status
    }

    func client() throws -> WireTestClient { try WireTestClient(path: socketPath) }

    /// A test that failed before its `stop()` still stops its daemon (and its socket) here.
    deinit {
        daemon?.requestStop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
