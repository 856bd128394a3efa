import Glibc
import Testing
@testable import UserListServer

/// The daemon's own socket takes its mode and group from the configuration.
@Suite struct SocketSettingsTests {
    private let defaults = DaemonConfig(socketPath: "/tmp/x.sock", databasePath: "/tmp/x.db", stateDirectory: "/tmp/x")

    private func parse(_ arguments: [String]) throws(ConfigError) -> DaemonConfig? {
        guard case .run(let config) = try ConfigParser.parse(arguments: arguments, defaults: defaults, readFile: { _ in "" }) else { return nil }
        return config
    }

    @Test func modeAndGroupAreRead() throws {
        let config = try #require(try parse(["--socket-mode", "0666", "--socket-group", "staff"]))
        #expect(config.socketMode == 0o666)
        #expect(config.effectiveSocketMode == 0o666)
        #expect(config.socketGroup == "staff")
    }

    @Test func theDefaultModeDependsOnWhoRunsTheDaemon() throws {
        let config = try #require(try parse([]))
        #expect(config.socketMode == nil)
        #expect(config.effectiveSocketMode == (geteuid() == 0 ? 0o660 : 0o600))
    }

    @Test(arguments: ["999", "rw-rw----", "01777"])
    func aModeThatIsNotOctalIsRefused(mode: String) {
        #expect(throws: ConfigError.self) { _ = try parse(["--socket-mode", mode]) }
    }

    @Test func anUnknownSocketGroupIsRefusedByName() {
        do {
            _ = try GroupMembership.socketGroup("no-such-group-for-userlistd")
            Issue.record("an unknown group was accepted")
        } catch {
            #expect(error.description.contains("no-such-group-for-userlistd"))
        }
    }
}
