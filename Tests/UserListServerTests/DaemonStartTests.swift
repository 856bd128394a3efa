import Foundation
import Glibc
import Testing
import UserListData
import UserListServer
import UserListTestSupport

/// Starting where another daemon already answers is refused; a socket file left by a crash is not.
@Suite(.serialized, .timeLimit(.minutes(3))) struct DaemonStartTests {
    /// A daemon on `socketPath`, its logger, and a pulse that beats after each line it logs.
    private func secondDaemon(on socketPath: String, directory: String) throws -> (Daemon, Logger, Pulse) {
        let repository = try SQLiteUserRepository(path: directory + "/second.sqlite3")
        let feed = try SQLiteChangeFeed(observing: repository)
        let logged = Pulse()
        let logger = Logger(sink: .observed { _ in logged.beat() }, level: .debug)
        let config = DaemonConfig(socketPath: socketPath, databasePath: directory + "/second.sqlite3",
                                  stateDirectory: directory + "/second-state")
        let daemon = Daemon(config: config, logger: logger, notifier: SystemdNotifier(environment: [:]),
                            store: .init(repository: repository, feed: feed, description: "second", close: {}),
                            reloadConfig: { nil })
        return (daemon, logger, logged)
    }

    @Test func aSecondDaemonOnALiveSocketRefusesToStartAndSaysWhy() async throws {
        let first = try await DaemonHarness()
        let (second, logger, _) = try secondDaemon(on: first.socketPath, directory: first.directory)
        let status = await second.run()
        #expect(status == 1)
        #expect(logger.entries.contains { $0.level == .error && $0.message.contains("another userlistd is already answering") })
        let client = try first.client()
        _ = try await client.hello(key: "first-still-serves")
        await first.stop()
    }

    @Test func aStaleSocketFileIsReplaced() async throws {
        let directory = NSTemporaryDirectory() + "userlistd-stale-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/s.sock"
        // What a crashed daemon leaves: a bound socket inode nobody listens on.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = try UnixSocket.address(path)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        close(fd)
        #expect(FileManager.default.fileExists(atPath: path))

        let (daemon, logger, logged) = try secondDaemon(on: path, directory: directory)
        let running = Task { await daemon.run() }
        // "ready" is logged once it listens on the path (the stale inode replaced).
        #expect(await logged.until { logger.entries.contains { $0.message.hasSuffix(" ready") } })
        #expect(UnixSocket.isAnswering(path))
        daemon.requestStop()
        #expect(await running.value == 0)
    }
}
