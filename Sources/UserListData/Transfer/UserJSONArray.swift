import Foundation
import UserListDomain

/// Reads a JSON array of users in the REST shape (`UserDTO`) straight from its bytes.
///
/// An import of a million users is a 160 MB file, and Foundation's `JSONDecoder` reads it at
/// about 40 MB/s: four seconds before the first row is written. This reads the same entries
/// several times faster. It takes what `JSONDecoder` takes for `[UserDTO]`: keys in any order,
/// unknown keys skipped whatever their value, `avatar_url` null or absent, every JSON escape;
/// and refuses what it refuses (invalid UTF-8, a control byte in a string, a lone surrogate, a
/// missing key, a malformed id), saying which entry and where. Like it, it allows one trailing
/// comma before a closing bracket. Two differences: `version` must be written as an integer
/// (`3`, not `3.0`), and `id` as a UUID's canonical text (Foundation's parser also lets some
/// malformed ones through, such as a space among the digits).
struct UserJSONArray {
    struct Failure: Error, CustomStringConvertible {
        /// 1-based entry of the array, 0 when the array itself is wrong.
        let entry: Int
        let offset: Int
        let message: String
        var description: String {
            (entry > 0 ? "entry \(entry), " : "") + "byte \(offset): \(message)"
        }
    }

    static func decode(_ data: Data) throws(Failure) -> [UserDTO] {
        let result = data.withUnsafeBytes { bytes in
            Result { () throws(Failure) -> [UserDTO] in
                var reader = UserJSONArray(bytes: bytes)
                return try reader.array()
            }
        }
        return try result.get()
    }

    private let bytes: UnsafeRawBufferPointer
    private var position = 0
    private var entry = 0

    private init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    // MARK: the array and its entries

    private mutating func array() throws(Failure) -> [UserDTO] {
        var users: [UserDTO] = []
        users.reserveCapacity(bytes.count / 170)  // a typical entry's size
        try expect(UInt8(ascii: "["), "the file must be a JSON array of users")
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            position += 1
        } else {
            while true {
                entry += 1
                users.append(try user())
                skipWhitespace()
                guard let next = peek() else { throw failure("the array is not closed: the file ends early") }
                position += 1
                if next == UInt8(ascii: "]") || next == UInt8(ascii: ",") && closes(UInt8(ascii: "]")) { break }
                guard next == UInt8(ascii: ",") else {
                    throw failure("expected ',' or ']' after an entry", at: position - 1)
                }
            }
        }
        entry = 0
        skipWhitespace()
        guard position == bytes.count else { throw failure("unexpected bytes after the array") }
        return users
    }

    private mutating func user() throws(Failure) -> UserDTO {
        try expect(UInt8(ascii: "{"), "each entry must be an object {id, full_name, email, avatar_url, version}")
        var id: UUID?, name: String?, email: String?, avatar: String?, version: Int?
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            position += 1
        } else {
            while true {
                skipWhitespace()
                let key = try field()
                try expect(UInt8(ascii: ":"), "expected ':' after a key")
                skipWhitespace()
                switch key {
                case .id:
                    let valueStart = position
                    guard let parsed = try uuid() else { throw failure("\"id\" is not a UUID", at: valueStart) }
                    id = parsed
                case .fullName: name = try string()
                case .email: email = try string()
                case .avatarURL: avatar = try literalNull() ? nil : try string()
                case .version: version = try integer()
                case .other: try skipValue(depth: 0)
                }
                skipWhitespace()
                guard let next = peek() else { throw failure("the entry is not closed: the file ends early") }
                position += 1
                if next == UInt8(ascii: "}") || next == UInt8(ascii: ",") && closes(UInt8(ascii: "}")) { break }
                guard next == UInt8(ascii: ",") else {
                    throw failure("expected ',' or '}' in an entry", at: position - 1)
                }
            }
        }
        guard let id else { throw failure("the entry has no \"id\"") }
        guard let name else { throw failure("the entry has no \"full_name\"") }
        guard let email else { throw failure("the entry has no \"email\"") }
        guard let version else { throw failure("the entry has no \"version\"") }
        return UserDTO(id: id, fullName: name, email: email, avatarURL: avatar, version: version)
    }

    // MARK: keys and ids, read without making a string

    private enum Field { case id, fullName, email, avatarURL, version, other }

    private static let fields: [(name: StaticString, field: Field)] = [
        ("id", .id), ("full_name", .fullName), ("email", .email), ("avatar_url", .avatarURL), ("version", .version),
    ]

    /// The key at `position`, matched byte for byte when it has no escape.
    private mutating func field() throws(Failure) -> Field {
        let key = try rawString()
        return withBytes(of: key) { key in
            Self.fields.first { field in
                key.elementsEqual(UnsafeRawBufferPointer(start: field.name.utf8Start,
                                                         count: field.name.utf8CodeUnitCount))
            }?.field
        } ?? .other
    }

    /// The UUID in the string at `position`, or nil when it is not one.
    private mutating func uuid() throws(Failure) -> UUID? {
        withBytes(of: try rawString()) { UUIDText.parse($0) }
    }

    /// A string as the bytes where they lie when it has no escape, else decoded.
    private enum RawString {
        case bytes(Range<Int>)
        case decoded(String)
    }

    private func withBytes<T>(of text: RawString, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        switch text {
        case .bytes(let range): body(UnsafeRawBufferPointer(rebasing: bytes[range]))
        case .decoded(let text): Array(text.utf8).withUnsafeBytes(body)
        }
    }

    private mutating func rawString() throws(Failure) -> RawString {
        try expect(UInt8(ascii: "\""), "expected a string")
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                defer { position += 1 }
                return .bytes(start..<position)
            }
            if byte == UInt8(ascii: "\\") { return .decoded(try escapedString(from: start)) }
            if byte < 0x20 { throw failure("a control byte inside a string must be escaped") }
            position += 1
        }
        throw failure("a string is not closed: the file ends early", at: start - 1)
    }

    // MARK: values

    /// A string, escapes decoded; the common case (no escape) is one validated copy.
    private mutating func string() throws(Failure) -> String {
        switch try rawString() {
        case .bytes(let range): try text(range)
        case .decoded(let text): text
        }
    }

    private mutating func escapedString(from start: Int) throws(Failure) -> String {
        var utf8 = Array(bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: utf8, as: UTF8.self) else {
                    throw failure("a string is not valid UTF-8", at: start)
                }
                return text
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { break }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"): utf8.append(contentsOf: try unicodeEscape())
                default: throw failure("an unknown escape \\\(Character(Unicode.Scalar(escape)))", at: position - 2)
                }
            case 0..<0x20:
                throw failure("a control byte inside a string must be escaped", at: position - 1)
            default:
                utf8.append(byte)
            }
        }
        throw failure("a string is not closed: the file ends early", at: start - 1)
    }

    /// The scalar of `\uXXXX` (after the `u`), or of a surrogate pair `\uD8xx\uDCxx`, as UTF-8.
    private mutating func unicodeEscape() throws(Failure) -> [UInt8] {
        let escapeStart = position - 2
        var value = try hex4()
        if (0xD800..<0xDC00).contains(value) {
            guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                  bytes[position + 1] == UInt8(ascii: "u") else {
                throw failure("a \\u escape is half of a surrogate pair", at: escapeStart)
            }
            position += 2
            let low = try hex4()
            guard (0xDC00..<0xE000).contains(low) else {
                throw failure("a \\u escape is half of a surrogate pair", at: escapeStart)
            }
            value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00..<0xE000).contains(value) {
            throw failure("a \\u escape is half of a surrogate pair", at: escapeStart)
        }
        guard let scalar = Unicode.Scalar(value) else { throw failure("an invalid \\u escape", at: escapeStart) }
        return Array(String(Character(scalar)).utf8)
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard position + 4 <= bytes.count else { throw failure("a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = UUIDText.hexDigit(bytes[position]) else {
                throw failure("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    private func text(_ range: Range<Int>) throws(Failure) -> String {
        let raw = UnsafeRawBufferPointer(rebasing: bytes[range])
        guard let text = String(validating: raw.bindMemory(to: UInt8.self), as: UTF8.self) else {
            throw failure("a string is not valid UTF-8", at: range.lowerBound)
        }
        return text
    }

    private mutating func integer() throws(Failure) -> Int {
        let start = position
        let negative = peek() == UInt8(ascii: "-")
        if negative { position += 1 }
        var value = 0
        var digits = 0
        while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            let (times, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            guard !overflowA, !overflowB else { throw failure("\"version\" is too large", at: start) }
            value = sum
            digits += 1
            position += 1
        }
        guard digits > 0, !(digits > 1 && bytes[position - digits] == UInt8(ascii: "0")) else {
            throw failure("\"version\" must be an integer", at: start)
        }
        if let next = peek(), next == UInt8(ascii: ".") || next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
            throw failure("\"version\" must be an integer", at: start)
        }
        return negative ? -value : value
    }

    private mutating func literalNull() throws(Failure) -> Bool {
        guard peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count,
              memcmp(bytes.baseAddress! + position, word.utf8Start, count) == 0 else {
            throw failure("expected \(word)")
        }
        position += count
    }

    /// Any JSON value, for a key this reader does not use.
    private mutating func skipValue(depth: Int) throws(Failure) {
        guard depth < 512 else { throw failure("values nested more than 512 deep") }
        skipWhitespace()
        guard let byte = peek() else { throw failure("a value is missing: the file ends early") }
        switch byte {
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            position += 1
            skipWhitespace()
            if peek() == close {
                position += 1
                return
            }
            while true {
                if close == UInt8(ascii: "}") {
                    skipWhitespace()
                    _ = try string()
                    try expect(UInt8(ascii: ":"), "expected ':' after a key")
                }
                try skipValue(depth: depth + 1)
                skipWhitespace()
                guard let next = peek() else { throw failure("a value is not closed: the file ends early") }
                position += 1
                if next == close || next == UInt8(ascii: ",") && closes(close) { return }
                guard next == UInt8(ascii: ",") else {
                    throw failure("expected ',' in a nested value", at: position - 1)
                }
            }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let start = position
            position += 1
            while let next = peek(), Self.numberBytes.contains(next) { position += 1 }
            let number = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
            guard Double(number) != nil else {
                throw failure("a malformed number", at: start)
            }
        default:
            throw failure("expected a value")
        }
    }

    private static let numberBytes: Set<UInt8> = Set("0123456789+-.eE".utf8)

    // MARK: bytes

    private func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

    /// After a comma: whether `close` comes next (a trailing comma), taking it if so.
    private mutating func closes(_ close: UInt8) -> Bool {
        skipWhitespace()
        guard peek() == close else { return false }
        position += 1
        return true
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private mutating func expect(_ byte: UInt8, _ message: String) throws(Failure) {
        skipWhitespace()
        guard peek() == byte else { throw failure(message) }
        position += 1
    }

    private func failure(_ message: String, at offset: Int? = nil) -> Failure {
        Failure(entry: entry, offset: offset ?? position, message: message)
    }
}
