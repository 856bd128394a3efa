import UserListWire

/// What a consumer of `UserListClient.updates` sees, in the order it happened.
public enum ClientUpdate: Sendable {
    case connection(ConnectionState)
    case state(StateChange)
    case event(ServerMessage.Event)
    /// A protocol-level error from the server that was not about a pending intent.
    case serverError(ServerMessage.ErrorMessage)
}

public enum ConnectionState: Sendable, Equatable {
    case connecting
    case connected(ServerMessage.Welcome)
    /// The connection dropped; the client is trying again (`attempt` counts from 1).
    case reconnecting(attempt: Int)
    /// For good: closed by the caller, refused by the server, or out of reconnect attempts.
    case closed(reason: String)

    public var isConnected: Bool { if case .connected = self { true } else { false } }
}
