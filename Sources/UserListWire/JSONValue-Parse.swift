/// The byte-level JSON reader: every frame a client sends passes through it before anything else
/// looks at it, so it is written for speed and for hostile input.
///
/// It works on a contiguous buffer of bytes, never on `String`; text is validated as UTF-8 only
/// inside strings (the only place non-ASCII is legal) and decoded once per string. Nesting is
/// capped at `maximumDepth` so a frame of a million `[` cannot overflow the stack. Duplicate
/// object keys keep the last value, as most JSON readers do.
extension JSONValue {
    /// Deepest nesting of arrays and objects the parser accepts.
    public static let maximumDepth = 256

    /// Parses exactly one JSON value (surrounding whitespace allowed, nothing else).
    public init(parsing bytes: some Collection<UInt8>) throws(JSONParseError) {
        let result: Result<JSONValue, JSONParseError>? = bytes.withContiguousStorageIfAvailable { buffer in
            JSONValue.parseDocument(buffer)
        }
        if let result {
            self = try result.get()
        } else {
            self = try Array(bytes).withUnsafeBufferPointer { JSONValue.parseDocument($0) }.get()
        }
    }

    /// Parses a JSON document held in a string.
    public init(parsing text: String) throws(JSONParseError) {
        try self.init(parsing: Array(text.utf8))
    }

    private static func parseDocument(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, JSONParseError> {
        var parser = JSONParser(buffer)
        do throws(JSONParseError) {
            return .success(try parser.parseDocument())
        } catch {
            return .failure(error)
        }
    }
}

/// The reader behind `JSONValue(parsing:)` and `JSONSpans` (which validates without building).
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    var scratch: [UInt8] = []

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        let value = try parseValue(depth: 0)
        skipWhitespace()
        if index != bytes.count { throw JSONParseError(.trailingData, at: index) }
        return value
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
        let byte = bytes[index]
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral(JSONLiteral.true); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral(JSONLiteral.false); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral(JSONLiteral.null); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw JSONParseError(.unexpectedByte, at: index, byte: byte)
        }
    }

    mutating func expectLiteral(_ literal: [UInt8]) throws(JSONParseError) {
        for expected in literal {
            guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
            guard bytes[index] == expected else {
                throw JSONParseError(.unexpectedByte, at: index, byte: bytes[index])
            }
            index += 1
        }
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        var builder = ObjectBuilder()
        try walkObject(depth: depth, &builder)
        return .object(Dictionary(builder.members, uniquingKeysWith: { _, last in last }))
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        var builder = ArrayBuilder()
        try walkArray(depth: depth, &builder)
        return .array(builder.elements)
    }

    @inline(__always)
    mutating func expect(_ byte: UInt8) throws(JSONParseError) {
        guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
        guard bytes[index] == byte else { throw JSONParseError(.unexpectedByte, at: index, byte: bytes[index]) }
        index += 1
    }

    /// Reads a string starting at its opening quote. The common case (no escapes) is one scan and
    /// one decode of the bytes in place.
    mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        var sawNonASCII = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let run = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return try makeString(run, validate: sawNonASCII, offset: start)
            }
            if byte == UInt8(ascii: "\\") { return try parseEscapedString(from: start) }
            if byte < 0x20 { throw JSONParseError(.controlCharacterInString, at: index) }
            if byte >= 0x80 { sawNonASCII = true }
            index += 1
        }
        throw JSONParseError(.unexpectedEnd, at: index)
    }

    @inline(__always)
    func makeString(_ run: UnsafeBufferPointer<UInt8>, validate: Bool, offset: Int) throws(JSONParseError) -> String {
        if !validate { return String(decoding: run, as: UTF8.self) }
        guard let string = String(validating: run, as: UTF8.self) else {
            throw JSONParseError(.invalidUTF8, at: offset)
        }
        return string
    }

    /// The slow path, taken at the first backslash: copies into `scratch`, decoding escapes.
    mutating func parseEscapedString(from start: Int) throws(JSONParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                let scratch = self.scratch
                return try scratch.withUnsafeBufferPointer { (run) throws(JSONParseError) -> String in
                    try makeString(run, validate: true, offset: start)
                }
            case UInt8(ascii: "\\"):
                appendUTF8(try readEscape())
            default:
                if byte < 0x20 { throw JSONParseError(.controlCharacterInString, at: index) }
                scratch.append(byte)
                index += 1
            }
        }
        throw JSONParseError(.unexpectedEnd, at: index)
    }

    /// Reads one escape after its backslash (`index` at the backslash) and returns the scalar it
    /// stands for; a high surrogate must be followed by an escaped low one. Shared by the decoding
    /// and the skipping readers, so both accept exactly the same escapes.
    mutating func readEscape() throws(JSONParseError) -> UInt32 {
        index += 1
        guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
        let escape = bytes[index]
        index += 1
        switch escape {
        case UInt8(ascii: "\""): return 0x22
        case UInt8(ascii: "\\"): return 0x5C
        case UInt8(ascii: "/"): return 0x2F
        case UInt8(ascii: "b"): return 0x08
        case UInt8(ascii: "f"): return 0x0C
        case UInt8(ascii: "n"): return 0x0A
        case UInt8(ascii: "r"): return 0x0D
        case UInt8(ascii: "t"): return 0x09
        case UInt8(ascii: "u"):
            let scalar = UInt32(try readHex4())
            if scalar >= 0xD800 && scalar < 0xDC00 {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                      bytes[index + 1] == UInt8(ascii: "u")
                else { throw JSONParseError(.invalidEscape, at: index) }
                index += 2
                let low = UInt32(try readHex4())
                guard low >= 0xDC00 && low < 0xE000 else { throw JSONParseError(.invalidEscape, at: index) }
                return 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            if scalar >= 0xDC00 && scalar < 0xE000 { throw JSONParseError(.invalidEscape, at: index) }
            return scalar
        default:
            throw JSONParseError(.invalidEscape, at: index - 1)
        }
    }

    mutating func readHex4() throws(JSONParseError) -> UInt16 {
        guard index + 4 <= bytes.count else { throw JSONParseError(.unexpectedEnd, at: bytes.count) }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONParseError(.invalidEscape, at: index)
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case ..<0x80:
            scratch.append(UInt8(scalar))
        case ..<0x800:
            scratch.append(UInt8(0xC0 | (scalar >> 6)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        case ..<0x10000:
            scratch.append(UInt8(0xE0 | (scalar >> 12)))
            scratch.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        default:
            scratch.append(UInt8(0xF0 | (scalar >> 18)))
            scratch.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
            scratch.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        }
    }

    /// Numbers follow the JSON grammar exactly (no leading zeros, no "+", no bare "."). Integers
    /// that fit `Int64` stay exact; everything else goes through `Double`.
    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
        var magnitude: UInt64 = 0
        var overflow = false
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if bytes[index] >= UInt8(ascii: "1") && bytes[index] <= UInt8(ascii: "9") {
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                overflow = overflow || o1 || o2
                magnitude = sum
                index += 1
            }
        } else {
            throw JSONParseError(.invalidNumber, at: index)
        }
        var isInteger = true
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            try digits()
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            isInteger = false
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                index += 1
            }
            try digits()
        }
        if isInteger && !overflow {
            if !negative && magnitude <= UInt64(Int64.max) { return .int(Int64(magnitude)) }
            if negative && magnitude <= UInt64(Int64.max) + 1 {
                return .int(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
            }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let double = Double(text), double.isFinite else { throw JSONParseError(.invalidNumber, at: start) }
        return .double(double)
    }

    mutating func digits() throws(JSONParseError) {
        let start = index
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            index += 1
        }
        if index == start {
            if index == bytes.count { throw JSONParseError(.unexpectedEnd, at: index) }
            throw JSONParseError(.invalidNumber, at: index)
        }
    }
}

/// Gathers an object's members so that its dictionary is built once at its final size instead
/// of rehashing as it grows.
private struct ObjectBuilder: JSONObjectVisitor {
    var members: [(String, JSONValue)] = []
    var key = ""
    init() { members.reserveCapacity(8) }
    mutating func key(_ parser: inout JSONParser) throws(JSONParseError) { key = try parser.parseString() }
    mutating func value(_ parser: inout JSONParser, depth: Int) throws(JSONParseError) {
        members.append((key, try parser.parseValue(depth: depth)))
    }
}

private struct ArrayBuilder: JSONArrayVisitor {
    var elements: [JSONValue] = []
    mutating func element(_ parser: inout JSONParser, depth: Int) throws(JSONParseError) {
        elements.append(try parser.parseValue(depth: depth))
    }
}
