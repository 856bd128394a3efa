/// Everything the server may send, one case per `type` (Protocol/PROTOCOL.md, "Server to client").
///
/// State travels as `snapshot` (the whole document) and `patch` (RFC 6902 operations against the
/// previous state), both stamped with `epoch` and `seq` so a client can tell it missed something.
public enum ServerMessage: Sendable, Equatable {
    case welcome(Welcome)
    case snapshot(Snapshot)
    case patch(Patch)
    case event(Event)
    case reply(Reply)
    case error(ErrorMessage)
    case pong(nonce: JSONValue?)
    /// Liveness check of an idle client, which answers `pong` with the same nonce.
    case ping(nonce: JSONValue?)
    /// The server is closing the connection; `reason` is a short machine-friendly word
    /// ("bye", "shutting_down", "idle_timeout", "replaced").
    case goodbye(reason: String)

    public enum Access: String, Sendable, Hashable {
        case readWrite = "read-write"
        case readOnly = "read-only"
    }

    public struct Welcome: Sendable, Equatable {
        /// The version chosen for this connection.
        public var protocolVersion: Int
        public var server: PeerInfo
        public var sessionID: String
        /// True when the `session_key` named a live session and this connection reattached to it.
        public var resumed: Bool
        public var access: Access
        /// The epoch of the snapshot that follows.
        public var epoch: Int
        /// The daemon's `intents-per-second` for this client (`limits.intents_per_second`),
        /// announced so a client can stay under it by pacing itself; `nil` from a daemon that
        /// does not say.
        public var intentsPerSecond: Int?
        /// How long the daemon keeps a session, drafts included, once no client is attached
        /// (`limits.session_retention_seconds`), so a client can say until when; `nil` when unsaid.
        public var sessionRetentionSeconds: Int?
        /// The group whose members (and root) may write (`write_group`), told to a read-only
        /// session so its client can say whom to ask and what; `nil` for a read-write one.
        public var writeGroup: String?

        public init(protocolVersion: Int, server: PeerInfo, sessionID: String, resumed: Bool, access: Access,
                    epoch: Int, intentsPerSecond: Int? = nil, sessionRetentionSeconds: Int? = nil,
                    writeGroup: String? = nil) {
            self.protocolVersion = protocolVersion
            self.server = server
            self.sessionID = sessionID
            self.resumed = resumed
            self.access = access
            self.epoch = epoch
            self.intentsPerSecond = intentsPerSecond
            self.sessionRetentionSeconds = sessionRetentionSeconds
            self.writeGroup = writeGroup
        }
    }

    /// The whole session state. Starts a new `epoch`; its `seq` is 0 and the first patch after it
    /// has `seq` 1.
    public struct Snapshot: Sendable, Equatable {
        public var epoch: Int
        public var seq: Int
        public var state: JSONValue

        public init(epoch: Int, seq: Int = 0, state: JSONValue) {
            self.epoch = epoch
            self.seq = seq
            self.state = state
        }
    }

    /// Operations turning the state at `seq - 1` into the state at `seq`, within one epoch.
    public struct Patch: Sendable, Equatable {
        public var epoch: Int
        public var seq: Int
        public var ops: [PatchOperation]

        public init(epoch: Int, seq: Int, ops: [PatchOperation]) {
            self.epoch = epoch
            self.seq = seq
            self.ops = ops
        }
    }

    /// A one-off happening that is not state (navigation hints, "saved", changes by others).
    public struct Event: Sendable, Equatable {
        public var screen: String
        public var name: String
        public var payload: JSONValue

        public init(screen: String, name: String, payload: JSONValue = [:]) {
            self.screen = screen
            self.name = name
            self.payload = payload
        }
    }

    /// The code and text of a failure, as carried inside a `reply`.
    public struct ErrorBody: Sendable, Hashable {
        public var code: ErrorCode
        public var message: String
        /// The daemon keeps the request and finishes it itself (an import it had taken whole
        /// when its store failed): the client must not send it again. `"kept": true` on the
        /// wire, absent otherwise.
        public var kept: Bool

        public init(code: ErrorCode, message: String, kept: Bool = false) {
            self.code = code
            self.message = message
            self.kept = kept
        }
    }

    /// The answer to one intent. `ok` on the wire is derived from `outcome`, so a reply can
    /// never be both successful and carry an error.
    public struct Reply: Sendable, Equatable {
        public enum Outcome: Sendable, Equatable {
            case success(result: JSONValue?)
            case failure(ErrorBody)
        }

        public var id: Int
        public var outcome: Outcome

        public init(id: Int, outcome: Outcome) {
            self.id = id
            self.outcome = outcome
        }

        public static func success(id: Int, result: JSONValue? = nil) -> Reply {
            Reply(id: id, outcome: .success(result: result))
        }

        public static func failure(id: Int, code: ErrorCode, message: String, kept: Bool = false) -> Reply {
            Reply(id: id, outcome: .failure(ErrorBody(code: code, message: message, kept: kept)))
        }
    }

    /// A protocol-level error, not tied to the outcome of an intent's action (that is a failed
    /// `reply`). `fatal` tells the client the connection is about to close.
    public struct ErrorMessage: Sendable, Equatable {
        public var code: ErrorCode
        public var message: String
        /// The intent this error is about, when it could be read.
        public var id: Int?
        public var fatal: Bool

        /// `fatal` defaults to what the protocol table says for `code`.
        public init(code: ErrorCode, message: String, id: Int? = nil, fatal: Bool? = nil) {
            self.code = code
            self.message = message
            self.id = id
            self.fatal = fatal ?? code.isFatal
        }
    }

    public var type: String {
        switch self {
        case .welcome: "welcome"
        case .snapshot: "snapshot"
        case .patch: "patch"
        case .event: "event"
        case .reply: "reply"
        case .error: "error"
        case .pong: "pong"
        case .ping: "ping"
        case .goodbye: "goodbye"
        }
    }

    /// Parses a frame body.
    public init(frame bytes: some Collection<UInt8>) throws(MessageError) {
        let (type, fields) = try MessageEnvelope.open(bytes)
        try self.init(type: type, fields: fields)
    }

    public init(json: JSONValue) throws(MessageError) {
        let (type, fields) = try MessageEnvelope.open(json)
        try self.init(type: type, fields: fields)
    }

    private init(type: String, fields: FieldReader) throws(MessageError) {
        switch type {
        case "welcome":
            let accessText = try fields.string("access")
            guard let access = Access(rawValue: accessText) else {
                throw .invalidValue(field: "access",
                                    reason: "must be \"read-write\" or \"read-only\", found \"\(accessText)\"")
            }
            let limits = try fields.optionalNested("limits")
            self = .welcome(Welcome(
                protocolVersion: try fields.int("protocol"), server: try PeerInfo(try fields.nested("server")),
                sessionID: try fields.string("session_id"), resumed: try fields.bool("resumed"),
                access: access, epoch: try fields.int("epoch"),
                intentsPerSecond: try limits?.optionalInt("intents_per_second"),
                sessionRetentionSeconds: try limits?.optionalInt("session_retention_seconds"),
                writeGroup: try fields.optionalString("write_group")))
        case "snapshot":
            self = .snapshot(Snapshot(
                epoch: try fields.int("epoch"), seq: try fields.int("seq"), state: try fields.value("state")))
        case "patch":
            var ops: [PatchOperation] = []
            for (index, op) in try fields.array("ops").enumerated() {
                ops.append(try PatchOperation(json: op, field: "ops[\(index)]"))
            }
            self = .patch(Patch(epoch: try fields.int("epoch"), seq: try fields.int("seq"), ops: ops))
        case "event":
            self = .event(Event(
                screen: try fields.string("screen"), name: try fields.string("name"),
                payload: fields.optionalValue("payload") ?? [:]))
        case "reply":
            let id = try fields.int("id")
            if try fields.bool("ok") {
                self = .reply(.success(id: id, result: fields.optionalValue("result")))
            } else {
                guard let body = try fields.optionalNested("error") else { throw .missingField("error") }
                let (code, message) = try Self.tolerantError(body)
                self = .reply(.failure(id: id, code: code, message: message,
                                       kept: body.optionalValue("kept") == .bool(true)))
            }
        case "error":
            let (code, message) = try Self.tolerantError(fields)
            self = .error(ErrorMessage(
                code: code, message: message,
                id: try fields.optionalInt("id"), fatal: try fields.bool("fatal")))
        case "pong": self = .pong(nonce: fields.optionalValue("nonce"))
        case "ping": self = .ping(nonce: fields.optionalValue("nonce"))
        case "goodbye": self = .goodbye(reason: try fields.string("reason"))
        default: throw .unknownType(type)
        }
    }

    public var json: JSONValue {
        var object: [String: JSONValue] = ["type": .string(type)]
        switch self {
        case .welcome(let welcome):
            object["protocol"] = .int(Int64(welcome.protocolVersion))
            object["server"] = welcome.server.json
            object["session_id"] = .string(welcome.sessionID)
            object["resumed"] = .bool(welcome.resumed)
            object["access"] = .string(welcome.access.rawValue)
            object["epoch"] = .int(Int64(welcome.epoch))
            var limits: [String: JSONValue] = [:]
            if let rate = welcome.intentsPerSecond { limits["intents_per_second"] = .int(Int64(rate)) }
            if let kept = welcome.sessionRetentionSeconds { limits["session_retention_seconds"] = .int(Int64(kept)) }
            if !limits.isEmpty { object["limits"] = .object(limits) }
            if let group = welcome.writeGroup { object["write_group"] = .string(group) }
        case .snapshot(let snapshot):
            object["epoch"] = .int(Int64(snapshot.epoch))
            object["seq"] = .int(Int64(snapshot.seq))
            object["state"] = snapshot.state
        case .patch(let patch):
            object["epoch"] = .int(Int64(patch.epoch))
            object["seq"] = .int(Int64(patch.seq))
            object["ops"] = .array(patch.ops.map(\.json))
        case .event(let event):
            object["screen"] = .string(event.screen)
            object["name"] = .string(event.name)
            object["payload"] = event.payload
        case .reply(let reply):
            object["id"] = .int(Int64(reply.id))
            switch reply.outcome {
            case .success(let result):
                object["ok"] = true
                if let result { object["result"] = result }
            case .failure(let body):
                object["ok"] = false
                var error: [String: JSONValue] = ["code": .string(body.code.rawValue), "message": .string(body.message)]
                if body.kept { error["kept"] = true }
                object["error"] = .object(error)
            }
        case .error(let error):
            object["code"] = .string(error.code.rawValue)
            object["message"] = .string(error.message)
            if let id = error.id { object["id"] = .int(Int64(id)) }
            object["fatal"] = .bool(error.fatal)
        case .pong(let nonce), .ping(let nonce):
            if let nonce { object["nonce"] = nonce }
        case .goodbye(let reason):
            object["reason"] = .string(reason)
        }
        return .object(object)
    }
}

extension ServerMessage {
    /// A code this version does not know is kept readable instead of failing the frame (§8: a
    /// client treats an unknown code as non-fatal unless `fatal` says otherwise): it reads as
    /// `internal`, with the code itself in front of the message.
    static func tolerantError(_ fields: FieldReader) throws(MessageError) -> (ErrorCode, String) {
        let message = try fields.string("message")
        let text = try fields.string("code")
        guard let code = ErrorCode(rawValue: text) else { return (.internal, "[\(text)] \(message)") }
        return (code, message)
    }
}
