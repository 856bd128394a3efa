/// How a `UserListClient` connects and how patient it is.
public struct ClientConfiguration: Sendable {
    public var socketPath: String
    /// Names the session: the same key from another connection (or after a reconnect) attaches to
    /// the same ViewModels.
    public var sessionKey: String
    public var clientName: String
    public var clientBuild: String
    public var terminal: (columns: Int, rows: Int)?
    /// How long the handshake (connect, welcome, snapshot) may take.
    public var handshakeTimeout: Duration = .seconds(5)
    /// Default wait for an intent's reply.
    public var replyTimeout: Duration = .seconds(30)
    public var reconnect = ReconnectPolicy()

    public init(socketPath: String, sessionKey: String, clientName: String = "UserListClient",
                clientBuild: String = "dev") {
        self.socketPath = socketPath
        self.sessionKey = sessionKey
        self.clientName = clientName
        self.clientBuild = clientBuild
    }
}

/// Exponential backoff between reconnect attempts, bounded in count.
public struct ReconnectPolicy: Sendable {
    public var enabled = true
    public var initialDelay: Duration = .milliseconds(100)
    public var maximumDelay: Duration = .seconds(2)
    /// Attempts before giving up (about 40 s with the defaults).
    public var maximumAttempts = 25

    public init() {}

    public static let never: ReconnectPolicy = { var p = ReconnectPolicy(); p.enabled = false; return p }()

    /// The wait before attempt `n` (1-based): initial × 2^(n-1), capped.
    public func delay(beforeAttempt attempt: Int) -> Duration {
        var delay = initialDelay
        for _ in 1..<max(1, attempt) {
            delay = delay * 2
            if delay >= maximumDelay { return maximumDelay }
        }
        return min(delay, maximumDelay)
    }
}
