import Foundation
import Glibc

/// Everything the daemon can be told, from flags and an optional `key = value` file.
///
/// Precedence: built-in defaults, then the file (`/etc/userlistd.conf` when present, or
/// `--config FILE`), then flags. Keys are the flag names without the dashes.
public struct DaemonConfig: Equatable, Sendable {
    public enum LogLevel: String, Sendable, CaseIterable, Comparable {
        case debug, info, notice, warning, error

        /// syslog priority, as journald and `<N>` prefixes use it.
        public var priority: Int {
            switch self {
            case .debug: 7
            case .info: 6
            case .notice: 5
            case .warning: 4
            case .error: 3
            }
        }

        public static func < (a: LogLevel, b: LogLevel) -> Bool { a.priority > b.priority }
    }

    public var socketPath: String
    public var databasePath: String
    public var stateDirectory: String
    public var sampleData: Int = 0
    public var logLevel: LogLevel = .info
    /// How long a session with no client attached is kept, with its screens and drafts.
    public var retentionSeconds: Double = 300
    public var adminGroup: String = "userlistd"
    public var maxConnectionsPerUID = 256
    public var maxSessionsPerUID = 64
    public var maxFrameBytes = 1 << 20
    public var intentsPerSecond = 200
    /// Messages per second one uid's connections may send together before their reading pauses
    /// until the next second: one uid's flood cannot crowd out the others.
    public var intentsPerSecondPerUID = 2000
    /// New connections per second one uid may open; more are refused at once, before they cost
    /// a handler: one uid's connect storm cannot crowd out the others.
    public var connectionsPerSecondPerUID = 500
    /// Bytes queued for one slow client before its pending patches are dropped.
    public var clientBufferBytes = 256 * 1024
    /// Seconds without a word from a client before it is pinged; after twice this it is closed
    /// (`goodbye` `idle_timeout`). 0 turns pinging off.
    public var pingIntervalSeconds: Double = 30
    /// Seconds a frame may take from its first byte to its last; then `frame_timeout` and close.
    public var frameTimeoutSeconds: Double = 10
    /// Bytes of unfinished frames kept for all of one uid's connections; past it, `input_limit`.
    public var maxPartialBytesPerUID = 64 << 20
    /// Upstream REST service; when set, the store is a cache in front of it.
    public var upstreamURL: String?

    public init(socketPath: String, databasePath: String, stateDirectory: String) {
        self.socketPath = socketPath
        self.databasePath = databasePath
        self.stateDirectory = stateDirectory
    }

    /// Defaults as daemon(7) suggests: system paths for root, per-user paths for anyone else.
    public static func defaults(environment: [String: String] = ProcessInfo.processInfo.environment,
                                uid: uid_t = getuid()) -> DaemonConfig {
        let home = environment["HOME"] ?? "/tmp"
        let runtime: String
        let state: String
        if uid == 0 {
            runtime = "/run/userlistd"
            state = environment["STATE_DIRECTORY"] ?? "/var/lib/userlistd"
        } else {
            runtime = environment["XDG_RUNTIME_DIR"] ?? "/tmp/userlistd-\(uid)"
            state = environment["STATE_DIRECTORY"]
                ?? (environment["XDG_DATA_HOME"] ?? "\(home)/.local/share") + "/userlistd"
        }
        let socket = uid == 0 ? "\(runtime)/userlistd.sock" : "\(runtime)/userlistd.sock"
        return DaemonConfig(socketPath: socket, databasePath: "\(state)/users.sqlite3", stateDirectory: state)
    }
}
