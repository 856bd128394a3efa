import Glibc

/// The walk over objects and arrays that the parser builds with, and validation without
/// building: the same grammar as `JSONValue(parsing:)` (it shares the escape, number and literal
/// readers), moving past each value instead of making it. `JSONSlice` finds a document's parts so.
extension JSONParser {
    /// Moves past one value (leading whitespace allowed), checking it as the parser would.
    mutating func skipValue(depth: Int) throws(JSONParseError) {
        skipWhitespace()
        guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
        let byte = bytes[index]
        switch byte {
        case UInt8(ascii: "{"):
            var skipper = Skipper()
            try walkObject(depth: depth + 1, &skipper)
        case UInt8(ascii: "["):
            var skipper = Skipper()
            try walkArray(depth: depth + 1, &skipper)
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): try expectLiteral(JSONLiteral.true)
        case UInt8(ascii: "f"): try expectLiteral(JSONLiteral.false)
        case UInt8(ascii: "n"): try expectLiteral(JSONLiteral.null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try parseNumber()
        default: throw JSONParseError(.unexpectedByte, at: index, byte: byte)
        }
    }

    /// Moves past one value already known to be valid JSON (a `JSONSlice`'s parts): only strings
    /// and brackets are followed, nothing is checked, so a slice's parts are found at the speed
    /// of a byte scan after the one full check.
    mutating func skipTrustedValue() {
        skipWhitespace()
        let bytes = self.bytes  // locals: the loop runs on registers, not through `self`
        var i = index
        var depth = 0
        defer { index = i }
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") {
                i = Self.endOfTrustedString(bytes, from: i + 1)
                if depth == 0 { return }
            } else if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                depth += 1
                i += 1
            } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                if depth == 0 { return }  // the end of the container this value is in
                depth -= 1
                i += 1
                if depth == 0 { return }
            } else if depth == 0 && (byte == UInt8(ascii: ",") || byte <= 0x20) {
                return  // the end of a number or literal
            } else {
                i += 1
            }
        }
    }

    /// Just past the quote that closes the string whose text starts at `start`: `memchr` finds
    /// each quote, and one preceded by an odd run of backslashes is escaped.
    private static func endOfTrustedString(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return bytes.count }
        var from = start
        while from < bytes.count, let hit = memchr(base + from, Int32(UInt8(ascii: "\"")), bytes.count - from) {
            let quote = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            var backslashes = 0
            while quote - backslashes - 1 >= start && bytes[quote - backslashes - 1] == UInt8(ascii: "\\") {
                backslashes += 1
            }
            if backslashes % 2 == 0 { return quote + 1 }
            from = quote + 1
        }
        return bytes.count
    }

    /// Walks an object from its `{`: `visitor` reads each key (at its opening quote) and each
    /// value (after the colon). Generic rather than closures, so each use is specialized: the
    /// parser builds with it at full speed.
    @inline(__always)
    mutating func walkObject<V: JSONObjectVisitor>(depth: Int, _ visitor: inout V) throws(JSONParseError) {
        if depth > JSONValue.maximumDepth { throw JSONParseError(.tooDeep, at: index) }
        index += 1  // {
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
            guard bytes[index] == UInt8(ascii: "\"") else {
                throw JSONParseError(.unexpectedByte, at: index, byte: bytes[index])
            }
            try visitor.key(&self)
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            try visitor.value(&self, depth: depth)
            skipWhitespace()
            guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return
            default: throw JSONParseError(.unexpectedByte, at: index, byte: bytes[index])
            }
        }
    }

    /// Walks an array from its `[`; `visitor` reads each element.
    @inline(__always)
    mutating func walkArray<V: JSONArrayVisitor>(depth: Int, _ visitor: inout V) throws(JSONParseError) {
        if depth > JSONValue.maximumDepth { throw JSONParseError(.tooDeep, at: index) }
        index += 1  // [
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            try visitor.element(&self, depth: depth)
            skipWhitespace()
            guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return
            default: throw JSONParseError(.unexpectedByte, at: index, byte: bytes[index])
            }
        }
    }

    /// Moves past a string from its opening quote: escapes checked, UTF-8 validated when a byte
    /// outside ASCII appears (escapes are ASCII, so the raw run validates as its decoding would).
    mutating func skipString() throws(JSONParseError) {
        index += 1  // opening quote
        let start = index
        var sawNonASCII = false
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                if sawNonASCII {
                    let run = UnsafeBufferPointer(rebasing: bytes[start..<index])
                    guard String(validating: run, as: UTF8.self) != nil else {
                        throw JSONParseError(.invalidUTF8, at: start)
                    }
                }
                index += 1
                return
            case UInt8(ascii: "\\"):
                _ = try readEscape()
            default:
                if byte < 0x20 { throw JSONParseError(.controlCharacterInString, at: index) }
                if byte >= 0x80 { sawNonASCII = true }
                index += 1
            }
        }
        throw JSONParseError(.unexpectedEnd, at: index)
    }
}

/// What `walkObject` calls for each member.
protocol JSONObjectVisitor {
    /// Reads the key, the parser at its opening quote.
    mutating func key(_ parser: inout JSONParser) throws(JSONParseError)
    /// Reads the value after the colon; `depth` is the object's.
    mutating func value(_ parser: inout JSONParser, depth: Int) throws(JSONParseError)
}

/// What `walkArray` calls for each element.
protocol JSONArrayVisitor {
    /// Reads the element; `depth` is the array's.
    mutating func element(_ parser: inout JSONParser, depth: Int) throws(JSONParseError)
}

/// Moves past every member and element, checking them.
private struct Skipper: JSONObjectVisitor, JSONArrayVisitor {
    func key(_ parser: inout JSONParser) throws(JSONParseError) { try parser.skipString() }
    func value(_ parser: inout JSONParser, depth: Int) throws(JSONParseError) { try parser.skipValue(depth: depth) }
    func element(_ parser: inout JSONParser, depth: Int) throws(JSONParseError) { try parser.skipValue(depth: depth) }
}
