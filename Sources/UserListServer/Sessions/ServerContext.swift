import Foundation
import UserListWire
import ThreadLocks

/// What every connection shares: configuration, the registry, logging, and a hook for the
/// daemon to refresh its status line when connections change.
package final class ServerContext: Sendable {
    private let current: Lock<DaemonConfig>
    /// The configuration in force now (SIGHUP may replace it).
    package var config: DaemonConfig { current.withLock { $0 } }
    package let registry: SessionRegistry
    package let logger: Logger
    package let serverInfo: PeerInfo
    package let introspection: Introspection
    package let isWriter: @Sendable (UInt32) -> Bool
    package let liveObjects: LiveObjectCounts
    private let onConnectionsChanged: @Sendable () -> Void
    /// Every live connection's handler, for the liveness sweep (not touched per message).
    private let handlers = Lock<[ObjectIdentifier: ClientHandler]>([:])

    package init(config: DaemonConfig, registry: SessionRegistry, logger: Logger, serverInfo: PeerInfo,
                 introspection: Introspection, isWriter: @escaping @Sendable (UInt32) -> Bool,
                 liveObjects: LiveObjectCounts = LiveObjectCounts(),
                 onConnectionsChanged: @escaping @Sendable () -> Void = {}) {
        self.liveObjects = liveObjects
        self.current = Lock(config)
        self.registry = registry
        self.logger = logger
        self.serverInfo = serverInfo
        self.introspection = introspection
        self.isWriter = isWriter
        self.onConnectionsChanged = onConnectionsChanged
    }

    package func connectionsChanged() { onConnectionsChanged() }

    package func opened(_ handler: ClientHandler) { handlers.withLock { $0[ObjectIdentifier(handler)] = handler } }

    package func closed(_ handler: ClientHandler) {
        _ = handlers.withLock { $0.removeValue(forKey: ObjectIdentifier(handler)) }
    }

    /// Closes connections whose frame missed its deadline; with `pings`, also pings clients
    /// silent for `ping-interval` and closes those silent for twice that.
    package func checkConnections(pings: Bool) {
        let config = config
        let now = MonotonicClock.nanoseconds()
        let all = handlers.withLock { Array($0.values) }
        let timeout = Int64(config.frameTimeoutSeconds * 1e9)
        let interval = config.pingIntervalSeconds
        for handler in all {
            handler.checkFrameDeadline(now: now, timeoutNanoseconds: timeout)
            if pings && interval > 0 { handler.checkLiveness(now: now, intervalNanoseconds: Int64(interval * 1e9)) }
        }
    }

    /// Every live connection's handler (a handover takes them all).
    package var allHandlers: [ClientHandler] { handlers.withLock { Array($0.values) } }

    /// SIGHUP: rate limits, buffer sizes and the admin group apply to new work from now on.
    package func reload(_ config: DaemonConfig) { current.withLock { $0 = config } }
}
