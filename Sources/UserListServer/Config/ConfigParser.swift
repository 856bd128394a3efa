import Foundation

/// What the command line asked for besides settings.
public enum DaemonCommand: Equatable, Sendable {
    case run(DaemonConfig)
    case help
    case version
}

/// A configuration mistake, worded so the person can fix it from the message alone.
public struct ConfigError: Error, CustomStringConvertible, Equatable, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Reads flags and `key = value` files into a `DaemonConfig`.
public enum ConfigParser {
    public static let defaultConfigFile = "/etc/userlistd.conf"

    /// Keys accepted in the file and as `--key value` flags, with their help text.
    public static let options: [(key: String, value: String, help: String)] = [
        ("socket", "PATH", "Unix socket to listen on when systemd passes none"),
        ("socket-mode", "MODE", "octal mode of that socket (default 0660 as root, else 0600)"),
        ("socket-group", "GROUP", "group of that socket (default: the daemon's own group)"),
        ("database", "PATH", "SQLite file of the embedded store"),
        ("state-directory", "DIR", "where sessions are saved across restarts (one daemon at a time)"),
        ("sample-data", "N", "fill an empty store with N generated users"),
        ("log-level", "LEVEL", "debug, info, notice, warning or error (SIGHUP reloads)"),
        ("retention", "SECONDS", "how long a detached session is kept (SIGHUP reloads)"),
        ("history-days", "DAYS", "days of history (who changed what) kept, default 365 (SIGHUP reloads)"),
        ("session-journal-interval", "MS",
         "write changed sessions to the state directory this often, to survive a crash (0: only at shutdown)"),
        ("presence-interval", "SECONDS",
         "with PostgreSQL, tell the other daemons who has which user open this often, default 10"),
        ("event-loops", "N",
         "threads serving clients, 1 to \(EventLoopGroup.limit) "
            + "(default: one per core, at most \(EventLoopGroup.limit)); read at start"),
        ("admin-group", "GROUP", "members may write; others get read-only sessions"),
        ("max-connections-per-uid", "N", "connections one uid may hold (SIGHUP reloads)"),
        ("max-sessions-per-uid", "N", "sessions one uid may hold (SIGHUP reloads)"),
        ("connections-per-second-per-uid", "N", "new connections one uid may open per second (SIGHUP reloads)"),
        ("max-frame-bytes", "N", "largest frame a client may send"),
        ("intents-per-second", "N", "per client, before rate_limited errors (SIGHUP reloads)"),
        ("intents-per-second-per-uid", "N",
         "per uid over all its clients; then reading pauses for the second (SIGHUP reloads)"),
        ("client-buffer-bytes", "N", "queued bytes before a slow client's patches are dropped"),
        ("ping-interval", "SECONDS", "ping a client silent this long; close it after twice (0: never)"),
        ("frame-timeout", "SECONDS", "a frame must complete this long after its first byte (SIGHUP reloads)"),
        ("max-partial-bytes-per-uid", "N", "unfinished-frame bytes kept for one uid (SIGHUP reloads)"),
        ("upstream", "URL", "REST service to front with the SQLite store as its cache"),
    ]

    public static func parse(arguments: [String], defaults: DaemonConfig,
                             readFile: (String) -> String? = { try? String(contentsOfFile: $0, encoding: .utf8) })
        throws(ConfigError) -> DaemonCommand
    {
        var flags: [(String, String)] = []
        var configFile: String?
        var explicitFile = false
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            switch argument {
            case "-h", "--help": return .help
            case "-V", "--version": return .version
            default: break
            }
            guard argument.hasPrefix("--") else {
                throw ConfigError("unexpected argument '\(argument)'; see userlistd --help")
            }
            var key = String(argument.dropFirst(2))
            var value: String?
            if let equals = key.firstIndex(of: "=") {
                value = String(key[key.index(after: equals)...])
                key = String(key[..<equals])
            }
            guard key == "config" || options.contains(where: { $0.key == key }) else {
                throw ConfigError("unknown option '--\(key)'; see userlistd --help")
            }
            if value == nil {
                guard index < arguments.count else { throw ConfigError("option '--\(key)' needs a value") }
                value = arguments[index]
                index += 1
            }
            if key == "config" {
                configFile = value
                explicitFile = true
            } else {
                flags.append((key, value!))
            }
        }
        var config = defaults
        let file = configFile ?? defaultConfigFile
        if let text = readFile(file) {
            for (line, key, value) in try entries(in: text, file: file) {
                do throws(ConfigError) {
                    try apply(key, value, to: &config)
                } catch {
                    throw ConfigError("\(file):\(line): \(error.description)")
                }
            }
        } else if explicitFile {
            throw ConfigError("cannot read config file \(file)")
        }
        for (key, value) in flags { try apply(key, value, to: &config) }
        // Sessions are kept beside the database unless told otherwise, so a daemon run on a
        // store of its own never reads or writes the system's saved sessions.
        let databaseSet = flags.contains { $0.0 == "database" } || fileKeys(configFile ?? defaultConfigFile,
                                                                            readFile).contains("database")
        let stateSet = flags.contains { $0.0 == "state-directory" } || fileKeys(configFile ?? defaultConfigFile,
                                                                                readFile).contains("state-directory")
        if databaseSet && !stateSet {
            let directory = (config.databasePath as NSString).deletingLastPathComponent
            config.stateDirectory = directory.isEmpty ? "." : directory
        }
        return .run(config)
    }

    private static func fileKeys(_ file: String, _ readFile: (String) -> String?) -> Set<String> {
        guard let text = readFile(file), let entries = try? entries(in: text, file: file) else { return [] }
        return Set(entries.map { $0.1 })
    }

    /// Parses `key = value` lines; `#` starts a comment.
    public static func entries(in text: String, file: String) throws(ConfigError) -> [(Int, String, String)] {
        var result: [(Int, String, String)] = []
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw ConfigError("\(file):\(offset + 1): expected 'key = value', found '\(trimmed)'")
            }
            let key = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
            let value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard options.contains(where: { $0.key == key }) else {
                throw ConfigError("\(file):\(offset + 1): unknown key '\(key)'")
            }
            result.append((offset + 1, key, value))
        }
        return result
    }

    static func apply(_ key: String, _ value: String, to config: inout DaemonConfig) throws(ConfigError) {
        func number(_ minimum: Int = 0, atMost maximum: Int? = nil) throws(ConfigError) -> Int {
            guard let n = Int(value), n >= minimum, n <= maximum ?? .max else {
                let range = maximum.map { "from \(minimum) to \($0)" } ?? "of at least \(minimum)"
                throw ConfigError("'\(key)' needs a whole number \(range), not '\(value)'")
            }
            return n
        }
        func seconds() throws(ConfigError) -> Double {
            guard let n = Double(value), n >= 0 else {
                throw ConfigError("'\(key)' needs a number of seconds, not '\(value)'")
            }
            return n
        }
        switch key {
        case "socket": config.socketPath = value
        case "socket-mode":
            guard let mode = mode_t(value, radix: 8), mode <= 0o777 else {
                throw ConfigError("'socket-mode' needs an octal mode such as 0660, not '\(value)'")
            }
            config.socketMode = mode
        case "socket-group": config.socketGroup = value.isEmpty ? nil : value
        case "database": config.databasePath = value
        case "state-directory": config.stateDirectory = value
        case "sample-data": config.sampleData = try number()
        case "log-level": config.logLevel = try logLevel(value)
        case "retention": config.retentionSeconds = try seconds()
        case "history-days": config.historyDays = try number(1)
        case "session-journal-interval":
            guard let ms = Double(value), ms >= 0, ms <= 10_000 else {
                throw ConfigError("'session-journal-interval' needs milliseconds from 0 (off) to 10000, not '\(value)'")
            }
            config.sessionJournalMilliseconds = ms
        case "presence-interval":
            let interval = try seconds()
            guard interval >= 0.05 else { throw ConfigError("'presence-interval' must be at least 0.05 seconds") }
            config.presenceIntervalSeconds = interval
        case "event-loops": config.eventLoops = try number(1, atMost: EventLoopGroup.limit)
        case "admin-group": config.adminGroup = value
        case "max-connections-per-uid": config.maxConnectionsPerUID = try number(1)
        case "max-sessions-per-uid": config.maxSessionsPerUID = try number(1)
        case "connections-per-second-per-uid": config.connectionsPerSecondPerUID = try number(1)
        case "max-frame-bytes": config.maxFrameBytes = try number(64)
        case "intents-per-second": config.intentsPerSecond = try number(1)
        case "intents-per-second-per-uid": config.intentsPerSecondPerUID = try number(1)
        case "client-buffer-bytes": config.clientBufferBytes = try number(4096)
        case "ping-interval": config.pingIntervalSeconds = try seconds()
        case "frame-timeout":
            let timeout = try seconds()
            guard timeout > 0 else { throw ConfigError("'frame-timeout' must be more than 0 seconds") }
            config.frameTimeoutSeconds = timeout
        case "max-partial-bytes-per-uid": config.maxPartialBytesPerUID = try number(4096)
        case "upstream": config.upstreamURL = value.isEmpty ? nil : value
        default: throw ConfigError("unknown key '\(key)'")
        }
    }

    static func logLevel(_ value: String) throws(ConfigError) -> DaemonConfig.LogLevel {
        guard let level = DaemonConfig.LogLevel(rawValue: value) else {
            let levels = DaemonConfig.LogLevel.allCases.map(\.rawValue).joined(separator: ", ")
            throw ConfigError("'log-level' must be one of \(levels), not '\(value)'")
        }
        return level
    }

    public static func helpText(defaults: DaemonConfig) -> String {
        var text = """
        Usage: userlistd [OPTIONS]

        Hosts the user list's screens as sessions and streams their state to clients
        (userctl) over a Unix socket. Settings come from \(defaultConfigFile) (or --config
        FILE) as 'key = value' lines, then from flags of the same names.

        Options:

        """
        for option in options {
            let flag = "  --\(option.key) \(option.value)"
            // A flag too long for the column keeps its whole name and puts the help below it.
            let column = 34
            text += flag.count < column
                ? flag.padding(toLength: column, withPad: " ", startingAt: 0) + option.help + "\n"
                : flag + "\n" + String(repeating: " ", count: column) + option.help + "\n"
        }
        text += """
          --config FILE                   read settings from FILE
          -V, --version                   print the version and exit
          -h, --help                      print this help and exit

        Defaults here: socket \(defaults.socketPath), database \(defaults.databasePath).
        Signals: SIGHUP reloads the file; SIGTERM and SIGINT stop gracefully, saving sessions
        (with USERLISTD_FDSTORE=1 under systemd, SIGTERM hands every connection to the next
        start instead); SIGUSR2 re-executes the binary in place (an upgrade), handing every
        connection over, so attached clients never reconnect.
        One daemon per state directory: a second one exits 75 at once, naming the first's pid
        and socket (the lock is the file userlistd.lock there; the kernel frees it on any exit).

        """
        return text
    }
}
