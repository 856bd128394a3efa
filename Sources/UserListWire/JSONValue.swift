#if canImport(Glibc)
// Links libm, which `Double` rounding (`Int64(exactly:)`) calls into on Linux.
import Glibc
#endif

/// A JSON document held as a value, the currency of the wire: state snapshots, patch values,
/// intent arguments and replies are all `JSONValue`s.
///
/// Integers are kept apart from other numbers (`int` vs `double`) so that ids, versions, epochs
/// and sequence numbers survive a round trip exactly; `Double` cannot hold every `Int64`.
/// Equality is by JSON meaning: objects compare regardless of key order, and `int(1)` equals
/// `double(1.0)` (RFC 6902 `test` compares numbers by value).
///
/// Objects are unordered dictionaries; the serializer writes keys sorted by their UTF-8 bytes,
/// so the same value always produces the same bytes.
public enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue: Equatable {
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.int(a), .double(b)), let (.double(b), .int(a)):
            return Double(exactly: a) == b && Int64(exactly: b) == a
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)): return a == b
        default: return false
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue {
    /// The name of the JSON type, for error messages ("expected a string, found a number").
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { o } else { nil } }

    /// The value as an exact integer: an `int`, or a `double` with no fractional part that fits
    /// (some JSON libraries write `3` as `3.0`).
    public var int64Value: Int64? {
        switch self {
        case .int(let i): i
        case .double(let d): Int64(exactly: d)
        default: nil
        }
    }

    public var doubleValue: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }

    /// Member lookup for objects; `nil` for a missing key or a non-object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { o[key] } else { nil }
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact serialized form, so a value prints as the JSON it stands for.
    public var description: String { String(decoding: serialized(), as: UTF8.self) }
}
