import Foundation
import UserListWire

/// A small JSON Schema (draft 2020-12) validator for exactly the keywords Protocol/schema uses.
/// A keyword it does not know is reported as an error, so a schema can never silently rely on
/// something this validator skips.
struct SchemaValidator {
    /// Schema documents by file name ("hello.schema.json").
    let documents: [String: JSONValue]

    private static let ignored: Set<String> = ["$schema", "$id", "title", "description", "format", "$defs", "$comment"]

    /// Errors found validating `instance` against the document `file`; empty means valid.
    func validate(_ instance: JSONValue, against file: String) -> [String] {
        guard let schema = documents[file] else { return ["no schema \(file)"] }
        var errors: [String] = []
        validate(instance, schema, document: file, at: "", errors: &errors)
        return errors
    }

    private func resolve(_ reference: String, from document: String) -> (JSONValue, String)? {
        let parts = reference.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let file = parts[0].isEmpty ? document : String(parts[0])
        guard var node = documents[file] else { return nil }
        if parts.count == 2, !parts[1].isEmpty {
            guard let pointer = JSONPointer(parsing: String(parts[1])) else { return nil }
            for token in pointer.tokens {
                guard let next = node[token] else { return nil }
                node = next
            }
        }
        return (node, file)
    }

    private func matchesType(_ value: JSONValue, _ type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object): true
        case ("number", .int), ("number", .double): true
        case ("integer", .int): true
        case ("integer", .double(let d)): d.rounded() == d
        default: false
        }
    }

    private func validate(_ value: JSONValue, _ schema: JSONValue, document: String, at path: String, errors: inout [String]) {
        switch schema {
        case .bool(true): return
        case .bool(false): errors.append("\(path): not allowed"); return
        case .object: break
        default: errors.append("\(path): schema is not an object or boolean"); return
        }
        guard case .object(let keywords) = schema else { return }
        for (keyword, argument) in keywords.sorted(by: { $0.key < $1.key }) {
            switch keyword {
            case _ where SchemaValidator.ignored.contains(keyword):
                continue
            case "$ref":
                guard let reference = argument.stringValue, let (target, file) = resolve(reference, from: document) else {
                    errors.append("\(path): cannot resolve $ref \(argument)")
                    continue
                }
                validate(value, target, document: file, at: path, errors: &errors)
            case "type":
                let types = argument.arrayValue?.compactMap(\.stringValue) ?? [argument.stringValue ?? ""]
                if !types.contains(where: { matchesType(value, $0) }) {
                    errors.append("\(path): expected \(types.joined(separator: "|")), found \(value.typeName)")
                }
            case "const":
                if value != argument { errors.append("\(path): expected \(argument), found \(value)") }
            case "enum":
                if !(argument.arrayValue ?? []).contains(value) { errors.append("\(path): \(value) not in \(argument)") }
            case "required":
                guard case .object(let object) = value else { continue }
                for name in argument.arrayValue?.compactMap(\.stringValue) ?? [] where object[name] == nil {
                    errors.append("\(path): missing required \"\(name)\"")
                }
            case "properties":
                guard case .object(let object) = value, case .object(let properties) = argument else { continue }
                for (name, subschema) in properties {
                    if let member = object[name] {
                        validate(member, subschema, document: document, at: "\(path)/\(name)", errors: &errors)
                    }
                }
            case "additionalProperties":
                guard case .object(let object) = value else { continue }
                let known = Set(keywords["properties"]?.objectValue?.keys.map { $0 } ?? [])
                for (name, member) in object where !known.contains(name) {
                    validate(member, argument, document: document, at: "\(path)/\(name)", errors: &errors)
                }
            case "prefixItems":
                guard case .array(let array) = value else { continue }
                for (index, subschema) in (argument.arrayValue ?? []).enumerated() where index < array.count {
                    validate(array[index], subschema, document: document, at: "\(path)/\(index)", errors: &errors)
                }
            case "items":
                guard case .array(let array) = value else { continue }
                let start = keywords["prefixItems"]?.arrayValue?.count ?? 0
                for index in array.indices where index >= start {
                    validate(array[index], argument, document: document, at: "\(path)/\(index)", errors: &errors)
                }
            case "minItems":
                if case .array(let array) = value, array.count < (argument.int64Value ?? 0) {
                    errors.append("\(path): fewer than \(argument) items")
                }
            case "minimum":
                if let number = value.doubleValue, let bound = argument.doubleValue, number < bound,
                   matchesType(value, "number") {
                    errors.append("\(path): \(value) below minimum \(argument)")
                }
            case "maximum":
                if let number = value.doubleValue, let bound = argument.doubleValue, number > bound {
                    errors.append("\(path): \(value) above maximum \(argument)")
                }
            case "maxItems":
                if case .array(let array) = value, array.count > (argument.int64Value ?? .max) {
                    errors.append("\(path): more than \(argument) items")
                }
            case "pattern":
                guard case .string(let string) = value, let source = argument.stringValue else { continue }
                guard let regex = try? NSRegularExpression(pattern: source) else {
                    errors.append("\(path): pattern \(source) does not compile")
                    continue
                }
                let range = NSRange(string.startIndex..., in: string)
                if regex.firstMatch(in: string, range: range) == nil {
                    errors.append("\(path): \"\(string)\" does not match \(source)")
                }
            case "not":
                var found: [String] = []
                validate(value, argument, document: document, at: path, errors: &found)
                if found.isEmpty { errors.append("\(path): matches a schema it must not (\(argument))") }
            case "minLength", "maxLength":
                guard case .string(let string) = value, let bound = argument.int64Value else { continue }
                let count = Int64(string.count)
                if keyword == "minLength" ? count < bound : count > bound {
                    errors.append("\(path): length \(count) breaks \(keyword) \(bound)")
                }
            case "oneOf", "anyOf":
                let branches = argument.arrayValue ?? []
                var passing = 0
                var branchErrors: [String] = []
                for branch in branches {
                    var found: [String] = []
                    validate(value, branch, document: document, at: path, errors: &found)
                    if found.isEmpty { passing += 1 } else { branchErrors += found }
                }
                if keyword == "oneOf" && passing != 1 {
                    errors.append("\(path): matches \(passing) of oneOf's \(branches.count) branches \(passing == 0 ? branchErrors.description : "")")
                } else if keyword == "anyOf" && passing == 0 {
                    errors.append("\(path): matches none of anyOf \(branchErrors)")
                }
            default:
                errors.append("\(path): unsupported schema keyword \(keyword)")
            }
        }
    }
}
