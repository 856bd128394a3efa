import UserListWire

/// Why a client call failed, worded for the person at the terminal.
public struct ClientError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// No daemon answered on the socket (connect failed, or the handshake did not finish).
        case unreachable
        /// The connection dropped while the call was in flight, or the client is reconnecting.
        case disconnected
        /// No reply within the timeout.
        case timedOut
        /// The server refused: a failed `reply` or an `error` about this intent.
        case server(ErrorCode)
        /// The server sent something this client cannot read.
        case protocolViolation
        /// `close()` was called.
        case closed
    }

    public let kind: Kind
    public let message: String
    /// The daemon keeps what was asked and finishes it itself (a reply's error marked `kept`):
    /// sending it again would be wrong.
    public let kept: Bool

    public init(_ kind: Kind, _ message: String, kept: Bool = false) {
        self.kind = kind
        self.message = message
        self.kept = kept
    }

    public var description: String { message }

    /// The server's error code, when the server refused.
    public var serverCode: ErrorCode? { if case .server(let code) = kind { code } else { nil } }
}
