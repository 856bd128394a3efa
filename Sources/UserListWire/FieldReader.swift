/// Reads typed fields out of a JSON object with errors that name the field by its full path.
///
/// Unknown members are ignored (the compatibility rule: peers may add optional fields within a
/// version). A member that is present but `null` counts as absent for optional fields.
struct FieldReader {
    let object: [String: JSONValue]
    /// Path of this object within the message ("" at top level).
    let prefix: String

    init(_ value: JSONValue, field: String) throws(MessageError) {
        guard case .object(let object) = value else {
            throw MessageError.wrongType(field: field, expected: "an object", found: value)
        }
        self.object = object
        self.prefix = field
    }

    init(object: [String: JSONValue]) {
        self.object = object
        self.prefix = ""
    }

    func qualified(_ key: String) -> String { prefix.isEmpty ? key : "\(prefix).\(key)" }

    func value(_ key: String) throws(MessageError) -> JSONValue {
        guard let value = object[key] else { throw .missingField(qualified(key)) }
        return value
    }

    func optionalValue(_ key: String) -> JSONValue? {
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    func string(_ key: String) throws(MessageError) -> String {
        let value = try value(key)
        guard case .string(let string) = value else {
            throw .wrongType(field: qualified(key), expected: "a string", found: value)
        }
        return string
    }

    func optionalString(_ key: String) throws(MessageError) -> String? {
        guard let value = optionalValue(key) else { return nil }
        guard case .string(let string) = value else {
            throw .wrongType(field: qualified(key), expected: "a string", found: value)
        }
        return string
    }

    func int(_ key: String) throws(MessageError) -> Int {
        try integer(key, value: try value(key))
    }

    func optionalInt(_ key: String) throws(MessageError) -> Int? {
        guard let value = optionalValue(key) else { return nil }
        return try integer(key, value: value)
    }

    private func integer(_ key: String, value: JSONValue) throws(MessageError) -> Int {
        guard let integer = value.int64Value, let int = Int(exactly: integer) else {
            throw .wrongType(field: qualified(key), expected: "an integer", found: value)
        }
        return int
    }

    func bool(_ key: String) throws(MessageError) -> Bool {
        let value = try value(key)
        guard case .bool(let bool) = value else {
            throw .wrongType(field: qualified(key), expected: "a boolean", found: value)
        }
        return bool
    }

    func nested(_ key: String) throws(MessageError) -> FieldReader {
        try FieldReader(try value(key), field: qualified(key))
    }

    func optionalNested(_ key: String) throws(MessageError) -> FieldReader? {
        guard let value = optionalValue(key) else { return nil }
        return try FieldReader(value, field: qualified(key))
    }

    func objectValue(_ key: String) throws(MessageError) -> [String: JSONValue] {
        try nested(key).object
    }

    func array(_ key: String) throws(MessageError) -> [JSONValue] {
        let value = try value(key)
        guard case .array(let array) = value else {
            throw .wrongType(field: qualified(key), expected: "an array", found: value)
        }
        return array
    }

    func pointer(_ key: String) throws(MessageError) -> JSONPointer {
        let text = try string(key)
        guard let pointer = JSONPointer(parsing: text) else {
            throw .invalidValue(field: qualified(key), reason: "\"\(text)\" is not a JSON Pointer (RFC 6901)")
        }
        return pointer
    }

    func errorCode(_ key: String) throws(MessageError) -> ErrorCode {
        let text = try string(key)
        guard let code = ErrorCode(rawValue: text) else {
            throw .invalidValue(field: qualified(key), reason: "unknown error code \"\(text)\"")
        }
        return code
    }
}

/// Shared entry for both message enums: bytes → JSON object → its "type".
enum MessageEnvelope {
    static func open(_ bytes: some Collection<UInt8>) throws(MessageError) -> (type: String, fields: FieldReader) {
        let value: JSONValue
        do throws(JSONParseError) {
            value = try JSONValue(parsing: bytes)
        } catch {
            throw .invalidJSON(error)
        }
        return try open(value)
    }

    static func open(_ value: JSONValue) throws(MessageError) -> (type: String, fields: FieldReader) {
        guard case .object(let object) = value else { throw .notAnObject(value) }
        let fields = FieldReader(object: object)
        return (try fields.string("type"), fields)
    }
}
