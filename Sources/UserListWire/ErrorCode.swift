/// The machine-readable reason carried by `error` frames and failed `reply` frames.
///
/// Raw values are the strings on the wire (Protocol/PROTOCOL.md, "Error codes"); adding a code is
/// a protocol change, so peers in other languages can rely on this table.
public enum ErrorCode: String, Sendable, Hashable, CaseIterable {
    case malformedFrame = "malformed_frame"
    case frameTooLarge = "frame_too_large"
    case invalidJSON = "invalid_json"
    case invalidMessage = "invalid_message"
    case unknownMessageType = "unknown_message_type"
    case notReady = "not_ready"
    case alreadyAttached = "already_attached"
    case unsupportedVersion = "unsupported_version"
    case unknownScreen = "unknown_screen"
    case unknownAction = "unknown_action"
    case invalidArgs = "invalid_args"
    case rateLimited = "rate_limited"
    case readOnly = "read_only"
    case tooManyConnections = "too_many_connections"
    case tooManySessions = "too_many_sessions"
    case notFound = "not_found"
    case conflict = "conflict"
    case validation = "validation"
    case unavailable = "unavailable"
    case forbidden = "forbidden"
    case `internal` = "internal"
    case shuttingDown = "shutting_down"
    /// A frame did not complete within the server's frame deadline of its first byte.
    case frameTimeout = "frame_timeout"
    /// The peer's uid holds more unfinished-frame bytes than the server keeps for one uid.
    case inputLimit = "input_limit"

    /// Whether the server closes the connection after sending this error.
    ///
    /// Only codes after which the byte stream is unusable (a frame too large to skip) or the
    /// handshake cannot happen (no common version, no room for the connection, the daemon going
    /// away) are fatal. Everything else is answered and the connection carries on, so one bad
    /// intent never costs a client its session.
    public var isFatal: Bool {
        switch self {
        case .frameTooLarge, .unsupportedVersion, .tooManyConnections, .tooManySessions, .shuttingDown,
             .frameTimeout, .inputLimit:
            true
        default:
            false
        }
    }
}
