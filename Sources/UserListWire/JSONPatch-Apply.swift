/// RFC 6902 JSON Patch: applying operations, and computing them (`JSONPatch-Diff.swift`).
///
/// Application is atomic: the result is built on a copy, so on error the caller still holds the
/// untouched original (which a client then replaces with a fresh snapshot). The copy is cheap:
/// values are copy-on-write, and the walk below moves each container out of its enum case before
/// mutating it, so only the containers along a path are ever copied, once per patch: a patch
/// of k adds to a list of n rows costs one copy of the rows, not k. Nothing here `switch`es
/// over a node it then mutates: the switched value stays alive through the case, a second
/// reference, and every mutation would copy the container (measured: 500 adds to 50,000 rows
/// took 0.5 s that way, 2 ms this way).
public enum JSONPatch {
    /// Applies `operations` in order, each to the result of the previous one.
    public static func apply(_ operations: [PatchOperation], to document: JSONValue) throws(PatchError) -> JSONValue {
        var result = document
        for (index, operation) in operations.enumerated() {
            try apply(operation, to: &result, index: index)
        }
        return result
    }

    private static func apply(_ operation: PatchOperation, to document: inout JSONValue,
                              index: Int) throws(PatchError) {
        switch operation {
        case .add(let path, let value):
            try add(value, at: path, in: &document, index: index)
        case .remove(let path):
            _ = try remove(at: path, in: &document, index: index)
        case .replace(let path, let value):
            try withParent(of: path, in: &document, index: index) { (parent, token) throws(PatchError) in
                if var object = takeObject(&parent) {
                    defer { parent = .object(object) }
                    guard object[token] != nil else {
                        throw PatchError(reason: .pathNotFound, operationIndex: index, pointer: path)
                    }
                    object[token] = value
                } else if var array = takeArray(&parent) {
                    defer { parent = .array(array) }
                    let position = try arrayIndex(token, count: array.count, allowEnd: false, index: index,
                                                  pointer: path)
                    array[position] = value
                } else {
                    throw PatchError(reason: .notAContainer, operationIndex: index, pointer: path)
                }
            } root: { root throws(PatchError) in
                root = value
            }
        case .move(let from, let path):
            if from == path {
                _ = try value(at: from, in: document, index: index)
                return
            }
            if from.isProperPrefix(of: path) {
                throw PatchError(reason: .moveIntoOwnChild, operationIndex: index, pointer: path)
            }
            let moved = try remove(at: from, in: &document, index: index)
            try add(moved, at: path, in: &document, index: index)
        case .copy(let from, let path):
            try add(try value(at: from, in: document, index: index), at: path, in: &document, index: index)
        case .test(let path, let expected):
            guard try value(at: path, in: document, index: index) == expected else {
                throw PatchError(reason: .testFailed, operationIndex: index, pointer: path)
            }
        }
    }

    private static func add(_ value: JSONValue, at path: JSONPointer, in document: inout JSONValue,
                            index: Int) throws(PatchError) {
        try withParent(of: path, in: &document, index: index) { (parent, token) throws(PatchError) in
            if var object = takeObject(&parent) {
                defer { parent = .object(object) }
                object[token] = value
            } else if var array = takeArray(&parent) {
                defer { parent = .array(array) }
                let position = try arrayIndex(token, count: array.count, allowEnd: true, index: index, pointer: path)
                array.insert(value, at: position)
            } else {
                throw PatchError(reason: .notAContainer, operationIndex: index, pointer: path)
            }
        } root: { root throws(PatchError) in
            root = value
        }
    }

    private static func remove(at path: JSONPointer, in document: inout JSONValue,
                               index: Int) throws(PatchError) -> JSONValue {
        var removed = JSONValue.null
        try withParent(of: path, in: &document, index: index) { (parent, token) throws(PatchError) in
            if var object = takeObject(&parent) {
                defer { parent = .object(object) }
                guard let value = object.removeValue(forKey: token) else {
                    throw PatchError(reason: .pathNotFound, operationIndex: index, pointer: path)
                }
                removed = value
            } else if var array = takeArray(&parent) {
                defer { parent = .array(array) }
                let position = try arrayIndex(token, count: array.count, allowEnd: false, index: index, pointer: path)
                removed = array.remove(at: position)
            } else {
                throw PatchError(reason: .notAContainer, operationIndex: index, pointer: path)
            }
        } root: { root throws(PatchError) in
            // Removing the whole document leaves nothing a client could render.
            throw PatchError(reason: .pathNotFound, operationIndex: index, pointer: path)
        }
        return removed
    }

    /// Reads the value at `path` without modifying anything.
    static func value(at path: JSONPointer, in document: JSONValue, index: Int) throws(PatchError) -> JSONValue {
        var current = document
        for token in path.tokens {
            switch current {
            case .object(let object):
                guard let next = object[token] else {
                    throw PatchError(reason: .pathNotFound, operationIndex: index, pointer: path)
                }
                current = next
            case .array(let array):
                current = array[try arrayIndex(token, count: array.count, allowEnd: false, index: index, pointer: path)]
            default:
                throw PatchError(reason: .notAContainer, operationIndex: index, pointer: path)
            }
        }
        return current
    }

    /// Walks to the container holding the last token of `path` and hands it to `body` in place.
    private static func withParent(
        of path: JSONPointer, in document: inout JSONValue, index: Int,
        _ body: (inout JSONValue, String) throws(PatchError) -> Void,
        root: (inout JSONValue) throws(PatchError) -> Void
    ) throws(PatchError) {
        guard let last = path.tokens.last else { return try root(&document) }
        try descend(&document, path.tokens.dropLast(), path: path, index: index) { (parent) throws(PatchError) in
            try body(&parent, last)
        }
    }

    private static func descend(
        _ node: inout JSONValue, _ tokens: ArraySlice<String>, path: JSONPointer, index: Int,
        _ body: (inout JSONValue) throws(PatchError) -> Void
    ) throws(PatchError) {
        guard let token = tokens.first else { return try body(&node) }
        // Take the container out of the enum so it is uniquely referenced and mutates in place.
        if var object = takeObject(&node) {
            defer { node = .object(object) }
            guard object[token] != nil else {
                throw PatchError(reason: .pathNotFound, operationIndex: index, pointer: path)
            }
            try descend(&object[token]!, tokens.dropFirst(), path: path, index: index, body)
        } else if var array = takeArray(&node) {
            defer { node = .array(array) }
            let position = try arrayIndex(token, count: array.count, allowEnd: false, index: index, pointer: path)
            try descend(&array[position], tokens.dropFirst(), path: path, index: index, body)
        } else {
            throw PatchError(reason: .notAContainer, operationIndex: index, pointer: path)
        }
    }

    /// RFC 6901 array index: "0" or digits without a leading zero; "-" (one past the end) only
    /// where an `add` may append.
    private static func arrayIndex(_ token: String, count: Int, allowEnd: Bool, index: Int,
                                   pointer: JSONPointer) throws(PatchError) -> Int {
        if token == "-" {
            guard allowEnd else {
                throw PatchError(reason: .invalidArrayIndex, operationIndex: index, pointer: pointer)
            }
            return count
        }
        let utf8 = token.utf8
        guard !utf8.isEmpty, utf8.count <= 18, utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              utf8.first != UInt8(ascii: "0") || utf8.count == 1,
              let position = Int(token), position <= (allowEnd ? count : count - 1)
        else { throw PatchError(reason: .invalidArrayIndex, operationIndex: index, pointer: pointer) }
        return position
    }

    /// Moves the object out of `node`, leaving `.null`, so the caller holds the only reference
    /// and mutates it in place; nil (and `node` untouched) when `node` is not an object.
    private static func takeObject(_ node: inout JSONValue) -> [String: JSONValue]? {
        guard case .object(let object) = node else { return nil }
        node = .null
        return object
    }

    /// As `takeObject`, for an array.
    private static func takeArray(_ node: inout JSONValue) -> [JSONValue]? {
        guard case .array(let array) = node else { return nil }
        node = .null
        return array
    }
}
