/// Everything a client may send, one case per `type` (Protocol/PROTOCOL.md, "Client to server").
///
/// Parsing distinguishes an unknown `type` (`unknown_message_type`, answered, connection kept)
/// from a known type with a bad field (`invalid_message`, naming the field).
public enum ClientMessage: Sendable, Equatable {
    /// The first message on a connection: which protocol versions the client speaks and which
    /// session it wants.
    case hello(Hello)
    /// Something the user did, addressed to a screen on the session's stack.
    case intent(Intent)
    /// "My copy of the state is wrong; send a snapshot."
    case resync
    /// Liveness check; answered by `pong` with the same nonce.
    case ping(nonce: JSONValue?)
    /// The answer to the server's `ping`, with its nonce.
    case pong(nonce: JSONValue?)
    /// The client is leaving; answered by `goodbye`.
    case bye

    public struct Hello: Sendable, Equatable {
        /// Versions the client can speak (`protocol.min ... protocol.max`).
        public var protocolVersions: ClosedRange<Int>
        public var client: PeerInfo
        /// Names the session to create or reattach to; the same key from a new connection resumes
        /// the same ViewModels. At most `maximumSessionKeyBytes` of printable ASCII (parsing
        /// refuses anything else as `invalid_message`): keys are kept, listed and saved.
        public var sessionKey: String
        public static let maximumSessionKeyBytes = 128
        public var terminal: TerminalSize?

        public init(protocolVersions: ClosedRange<Int>, client: PeerInfo, sessionKey: String,
                    terminal: TerminalSize? = nil) {
            self.protocolVersions = protocolVersions
            self.client = client
            self.sessionKey = sessionKey
            self.terminal = terminal
        }
    }

    public struct TerminalSize: Sendable, Hashable {
        public var columns: Int
        public var rows: Int
        public init(columns: Int, rows: Int) {
            self.columns = columns
            self.rows = rows
        }
    }

    public struct Intent: Sendable, Equatable {
        /// Chosen by the client, echoed in the `reply` (and in an `error` about this intent).
        public var id: Int
        /// A screen id on the stack ("list", "detail") or "session".
        public var screen: String
        public var action: String
        /// Action arguments; `nil` when the action takes none.
        public var args: [String: JSONValue]?

        public init(id: Int, screen: String, action: String, args: [String: JSONValue]? = nil) {
            self.id = id
            self.screen = screen
            self.action = action
            self.args = args
        }
    }

    /// The largest intent id (in magnitude) a client may choose: 2^53−1, so that clients whose
    /// JSON numbers are doubles read the echoed id exactly (Protocol/PROTOCOL.md §1).
    public static let maximumIntentID = 9_007_199_254_740_991

    /// The wire name of the message.
    public var type: String {
        switch self {
        case .hello: "hello"
        case .intent: "intent"
        case .resync: "resync"
        case .ping: "ping"
        case .pong: "pong"
        case .bye: "bye"
        }
    }

    /// Parses a frame body.
    public init(frame bytes: some Collection<UInt8>) throws(MessageError) {
        let (type, fields) = try MessageEnvelope.open(bytes)
        try self.init(type: type, fields: fields)
    }

    /// Reads an already-parsed JSON value.
    public init(json: JSONValue) throws(MessageError) {
        let (type, fields) = try MessageEnvelope.open(json)
        try self.init(type: type, fields: fields)
    }

    private init(type: String, fields: FieldReader) throws(MessageError) {
        switch type {
        case "hello":
            let versions = try fields.nested("protocol")
            let low = try versions.int("min")
            let high = try versions.int("max")
            guard low <= high else {
                throw .invalidValue(field: "protocol", reason: "min (\(low)) is greater than max (\(high))")
            }
            guard low >= 1, high <= ProtocolVersion.highestNumber else {
                throw .invalidValue(field: "protocol",
                                    reason: "versions are numbered 1 to \(ProtocolVersion.highestNumber); "
                                        + "got \(low)-\(high)")
            }
            var terminal: TerminalSize?
            if let size = try fields.optionalNested("terminal") {
                terminal = TerminalSize(columns: try size.int("columns"), rows: try size.int("rows"))
            }
            let sessionKey = try fields.string("session_key")
            guard sessionKey.utf8.count <= Hello.maximumSessionKeyBytes,
                  sessionKey.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                throw .invalidValue(field: "session_key", reason: "a session key is at most "
                                    + "\(Hello.maximumSessionKeyBytes) bytes of printable ASCII")
            }
            self = .hello(Hello(
                protocolVersions: low...high, client: try PeerInfo(try fields.nested("client")),
                sessionKey: sessionKey, terminal: terminal))
        case "intent":
            let id = try fields.int("id")
            guard abs(id) <= ClientMessage.maximumIntentID else {
                throw .invalidValue(field: "id", reason: "\(id) is outside ±(2^53−1), "
                                    + "the integers every JSON reader holds exactly")
            }
            do throws(MessageError) {
                var args: [String: JSONValue]?
                if let value = fields.optionalValue("args") {
                    args = try FieldReader(value, field: "args").object
                }
                self = .intent(Intent(
                    id: id, screen: try fields.string("screen"), action: try fields.string("action"), args: args))
            } catch {
                var error = error
                error.intentID = id
                throw error
            }
        case "resync": self = .resync
        case "ping": self = .ping(nonce: fields.optionalValue("nonce"))
        case "pong": self = .pong(nonce: fields.optionalValue("nonce"))
        case "bye": self = .bye
        default: throw .unknownType(type)
        }
    }

    public var json: JSONValue {
        var object: [String: JSONValue] = ["type": .string(type)]
        switch self {
        case .hello(let hello):
            object["protocol"] = [
                "min": .int(Int64(hello.protocolVersions.lowerBound)),
                "max": .int(Int64(hello.protocolVersions.upperBound)),
            ]
            object["client"] = hello.client.json
            object["session_key"] = .string(hello.sessionKey)
            if let terminal = hello.terminal {
                object["terminal"] = ["columns": .int(Int64(terminal.columns)), "rows": .int(Int64(terminal.rows))]
            }
        case .intent(let intent):
            object["id"] = .int(Int64(intent.id))
            object["screen"] = .string(intent.screen)
            object["action"] = .string(intent.action)
            if let args = intent.args { object["args"] = .object(args) }
        case .ping(let nonce), .pong(let nonce):
            if let nonce { object["nonce"] = nonce }
        case .resync, .bye:
            break
        }
        return .object(object)
    }
}
