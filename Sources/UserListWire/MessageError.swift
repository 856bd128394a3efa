/// Why a frame body is not a valid message. It carries the `ErrorCode` the server answers with,
/// the field at fault (so the person reading the error knows what to fix), and the intent id when
/// one could be read, so the error can be matched to the request that caused it.
public struct MessageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `invalid_json`, `invalid_message` or `unknown_message_type`.
    public let code: ErrorCode
    /// Dotted path of the offending field ("protocol.min", "ops[2].path"), if one is to blame.
    public let field: String?
    /// A sentence for a person.
    public let message: String
    /// The `id` of the intent being parsed, when it could be read before the failure.
    public internal(set) var intentID: Int?

    init(code: ErrorCode, field: String?, message: String) {
        self.code = code
        self.field = field
        self.message = message
        self.intentID = nil
    }

    public var description: String { message }

    static func invalidJSON(_ error: JSONParseError) -> MessageError {
        MessageError(code: .invalidJSON, field: nil, message: error.description)
    }

    static func notAnObject(_ value: JSONValue) -> MessageError {
        MessageError(code: .invalidMessage, field: nil,
                     message: "a message must be a JSON object, found \(value.typeName)")
    }

    static func unknownType(_ type: String) -> MessageError {
        MessageError(code: .unknownMessageType, field: "type", message: "unknown message type \"\(type)\"")
    }

    static func missingField(_ field: String) -> MessageError {
        MessageError(code: .invalidMessage, field: field, message: "missing required field \"\(field)\"")
    }

    static func wrongType(field: String, expected: String, found: JSONValue) -> MessageError {
        MessageError(
            code: .invalidMessage, field: field,
            message: "field \"\(field)\" must be \(expected), found \(found.typeName)")
    }

    static func invalidValue(field: String, reason: String) -> MessageError {
        MessageError(code: .invalidMessage, field: field, message: "field \"\(field)\": \(reason)")
    }
}
