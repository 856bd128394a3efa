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
    /// How many days of history (who changed what) the store keeps; older entries are pruned
    /// in the background (SIGHUP reloads).
    public var historyDays: Int = 365
    /// Milliseconds between writes of a changed session to the state directory's journal, so a
    /// crash loses at most this much typing. 0 turns the journal off (sessions are then saved
    /// only by a clean shutdown).
    public var sessionJournalMilliseconds: Double = 75
    /// Seconds between re-announcements of who has which user open here, to the other daemons
    /// on a shared PostgreSQL database; another daemon's people not re-announced for three
    /// intervals are dropped (their daemon died). Read at start.
    public var presenceIntervalSeconds: Double = 10
    /// Threads that serve clients (event loops); nil: one per core, at most `EventLoopGroup`'s
    /// limit. Every client is local, so the clients reading a change share the cores with the
    /// loops writing it: on a small machine whose load is mostly many terminals watching the
    /// same list, fewer loops leave them a core and deliver faster; more loops attach, restore
    /// and serve intents in parallel (BENCHMARKS.md, "Event loops"). Read at start.
    public var eventLoops: Int?
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
    /// Mode of the socket the daemon makes itself (not systemd's). nil: 0660 when root runs it
    /// (with `socket-group`, the admin group's door), 0600 otherwise (its owner's alone).
    public var socketMode: mode_t?
    /// Group given to the socket the daemon makes itself; nil leaves the daemon's own group.
    public var socketGroup: String?

    /// The socket mode actually used (see `socketMode`).
    public var effectiveSocketMode: mode_t { socketMode ?? (geteuid() == 0 ? 0o660 : 0o600) }

    /// Where a per-user daemon puts its socket when `$XDG_RUNTIME_DIR` is not set: a predictable
    /// path under /tmp, so it must be ours, mode 0700 (see `RuntimeDirectory`).
    public static func fallbackRuntimeDirectory(uid: uid_t) -> String { "/tmp/userlistd-\(uid)" }

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
            runtime = environment["XDG_RUNTIME_DIR"] ?? fallbackRuntimeDirectory(uid: uid)
            state = environment["STATE_DIRECTORY"]
                ?? (environment["XDG_DATA_HOME"] ?? "\(home)/.local/share") + "/userlistd"
        }
        let socket = uid == 0 ? "\(runtime)/userlistd.sock" : "\(runtime)/userlistd.sock"
        return DaemonConfig(socketPath: socket, databasePath: "\(state)/users.sqlite3", stateDirectory: state)
    }
}
