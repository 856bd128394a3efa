/// One RFC 6902 JSON Patch operation. A `patch` frame carries a list of them, applied in order,
/// each to the result of the previous one.
///
/// An enum rather than a struct with optional `value`/`from` fields, so an `add` without a value
/// or a `move` without a source cannot be built.
public enum PatchOperation: Sendable, Equatable {
    case add(path: JSONPointer, value: JSONValue)
    case remove(path: JSONPointer)
    case replace(path: JSONPointer, value: JSONValue)
    case move(from: JSONPointer, path: JSONPointer)
    case copy(from: JSONPointer, path: JSONPointer)
    case test(path: JSONPointer, value: JSONValue)

    /// The RFC name of the operation ("add", "remove", ...).
    public var name: String {
        switch self {
        case .add: "add"
        case .remove: "remove"
        case .replace: "replace"
        case .move: "move"
        case .copy: "copy"
        case .test: "test"
        }
    }

    public var path: JSONPointer {
        switch self {
        case .add(let path, _), .remove(let path), .replace(let path, _), .move(_, let path),
             .copy(_, let path), .test(let path, _):
            path
        }
    }

    /// The RFC 6902 object form: `{"op":"add","path":"/a","value":1}`.
    public var json: JSONValue {
        var object: [String: JSONValue] = ["op": .string(name), "path": .string(path.description)]
        switch self {
        case .add(_, let value), .replace(_, let value), .test(_, let value):
            object["value"] = value
        case .move(let from, _), .copy(let from, _):
            object["from"] = .string(from.description)
        case .remove:
            break
        }
        return .object(object)
    }

    /// Reads the RFC 6902 object form. `field` names where it sits in the message ("ops[2]"), so
    /// an error points at the bad operation.
    public init(json: JSONValue, field: String = "op") throws(MessageError) {
        let reader = try FieldReader(json, field: field)
        let op = try reader.string("op")
        let path = try reader.pointer("path")
        switch op {
        case "add": self = .add(path: path, value: try reader.value("value"))
        case "remove": self = .remove(path: path)
        case "replace": self = .replace(path: path, value: try reader.value("value"))
        case "move": self = .move(from: try reader.pointer("from"), path: path)
        case "copy": self = .copy(from: try reader.pointer("from"), path: path)
        case "test": self = .test(path: path, value: try reader.value("value"))
        default:
            throw MessageError.invalidValue(field: reader.qualified("op"), reason: "unknown patch operation \"\(op)\"")
        }
    }
}
