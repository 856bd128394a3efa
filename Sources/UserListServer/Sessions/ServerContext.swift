import Foundation
import UserListWire

/// What every connection shares: configuration, the registry, logging, and a hook for the
/// daemon to refresh its status line when connections change.
package final class ServerContext: Sendable {
    package let config: DaemonConfig
    package let registry: SessionRegistry
    package let logger: Logger
    package let serverInfo: PeerInfo
    package let introspection: Introspection
    package let isWriter: @Sendable (UInt32) -> Bool
    private let onConnectionsChanged: @Sendable () -> Void

    package init(config: DaemonConfig, registry: SessionRegistry, logger: Logger, serverInfo: PeerInfo,
                 introspection: Introspection, isWriter: @escaping @Sendable (UInt32) -> Bool,
                 onConnectionsChanged: @escaping @Sendable () -> Void = {}) {
        self.config = config
        self.registry = registry
        self.logger = logger
        self.serverInfo = serverInfo
        self.introspection = introspection
        self.isWriter = isWriter
        self.onConnectionsChanged = onConnectionsChanged
    }

    package func connectionsChanged() { onConnectionsChanged() }
}
