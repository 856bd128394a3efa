/// An RFC 6901 JSON Pointer: the address of a value inside a document, as used by every JSON
/// Patch operation ("/screens/0/state/users/417/name").
///
/// Held as unescaped reference tokens; `description` re-applies the escaping (`~` → `~0`,
/// `/` → `~1`), so a key containing "/" round-trips.
public struct JSONPointer: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The unescaped reference tokens, outermost first; empty for the whole document.
    public var tokens: [String]

    public init(tokens: [String]) { self.tokens = tokens }

    /// The pointer to the whole document ("").
    public static let root = JSONPointer(tokens: [])

    /// Parses the string form; `nil` if it does not start with "/" (and is not "") or holds a
    /// "~" not followed by "0" or "1". Labelled, because an unlabelled `JSONPointer("...")` with a
    /// literal would be taken as the (trapping) string-literal initializer.
    public init?(parsing text: String) {
        if text.isEmpty { self.tokens = []; return }
        guard text.utf8.first == UInt8(ascii: "/") else { return nil }
        var tokens: [String] = []
        for raw in text.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            guard let token = JSONPointer.unescape(raw) else { return nil }
            tokens.append(token)
        }
        self.tokens = tokens
    }

    /// For literals in code and tests; traps on a malformed pointer.
    public init(stringLiteral value: String) {
        guard let pointer = JSONPointer(parsing: value) else { preconditionFailure("invalid JSON pointer \(value)") }
        self = pointer
    }

    public func appending(_ token: String) -> JSONPointer { JSONPointer(tokens: tokens + [token]) }
    public func appending(index: Int) -> JSONPointer { appending(String(index)) }

    /// True if `self` is an ancestor of `other` (and not equal to it).
    public func isProperPrefix(of other: JSONPointer) -> Bool {
        tokens.count < other.tokens.count && zip(tokens, other.tokens).allSatisfy { $0 == $1 }
    }

    public var description: String {
        var out = ""
        for token in tokens {
            out += "/"
            out += Self.escaped(token)
        }
        return out
    }

    /// One reference token as it is written in a pointer: `~` as `~0`, `/` as `~1`; most tokens
    /// hold neither and come back as they are.
    static func escaped(_ token: String) -> String {
        guard token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return token }
        return token.replacingTildeAndSlash()
    }

    private static func unescape(_ raw: Substring.UTF8View.SubSequence) -> String? {
        guard raw.contains(UInt8(ascii: "~")) else { return String(Substring(raw)) }
        var bytes: [UInt8] = []
        var iterator = raw.makeIterator()
        while let byte = iterator.next() {
            if byte != UInt8(ascii: "~") { bytes.append(byte); continue }
            switch iterator.next() {
            case UInt8(ascii: "0"): bytes.append(UInt8(ascii: "~"))
            case UInt8(ascii: "1"): bytes.append(UInt8(ascii: "/"))
            default: return nil
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    fileprivate func replacingTildeAndSlash() -> String {
        var out = ""
        for character in unicodeScalars {
            switch character {
            case "~": out += "~0"
            case "/": out += "~1"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }
}
