/// Why a byte sequence is not a JSON document, and where.
///
/// `reason` is a struct around a private enum (the swift-nio habit) so new reasons can be added
/// without breaking anyone who switches on it; compare with `==` against the static members.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Reason: Sendable, Hashable {
        private enum Base: Hashable {
            case unexpectedEnd, unexpectedByte, invalidUTF8, invalidEscape, invalidNumber
            case controlCharacterInString, tooDeep, trailingData
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The input stops in the middle of a value.
        public static let unexpectedEnd = Reason(.unexpectedEnd)
        /// A byte that cannot start or continue a value here.
        public static let unexpectedByte = Reason(.unexpectedByte)
        /// A string's bytes are not valid UTF-8.
        public static let invalidUTF8 = Reason(.invalidUTF8)
        /// A backslash escape that JSON does not define, or a lone UTF-16 surrogate.
        public static let invalidEscape = Reason(.invalidEscape)
        /// A number that breaks the JSON grammar or does not fit a finite `Double`.
        public static let invalidNumber = Reason(.invalidNumber)
        /// A raw byte below 0x20 inside a string (JSON requires it escaped).
        public static let controlCharacterInString = Reason(.controlCharacterInString)
        /// Nesting beyond `JSONValue.maximumDepth`, refused so hostile input cannot exhaust the stack.
        public static let tooDeep = Reason(.tooDeep)
        /// Anything but whitespace after the value.
        public static let trailingData = Reason(.trailingData)
    }

    public let reason: Reason
    /// Byte offset in the input where the problem was found.
    public let offset: Int
    /// The offending byte, for `unexpectedByte`.
    let byte: UInt8?

    init(_ reason: Reason, at offset: Int, byte: UInt8? = nil) {
        self.reason = reason
        self.offset = offset
        self.byte = byte
    }

    public var description: String {
        let what: String
        switch reason {
        case .unexpectedEnd: what = "the document ends in the middle of a value"
        case .unexpectedByte:
            let byte = self.byte ?? 0
            if byte >= 0x21 && byte < 0x7F {
                what = "unexpected character '\(Character(Unicode.Scalar(byte)))'"
            } else {
                what = "unexpected byte 0x\(String(byte, radix: 16))"
            }
        case .invalidUTF8: what = "a string is not valid UTF-8"
        case .invalidEscape: what = "invalid escape sequence in a string (or a lone UTF-16 surrogate)"
        case .invalidNumber: what = "malformed or out-of-range number"
        case .controlCharacterInString: what = "unescaped control character in a string"
        case .tooDeep: what = "nesting deeper than \(JSONValue.maximumDepth) levels"
        default: what = "extra data after the JSON value"
        }
        return "invalid JSON at byte \(offset): \(what)"
    }
}
