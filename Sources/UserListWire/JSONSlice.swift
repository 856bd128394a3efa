/// A JSON value kept as the bytes it came in, validated but not built into `JSONValue`s: for a
/// client that passes large arrays through as they are (`userctl export` writes a page's users
/// without parsing and re-serializing each one, which was most of its CPU).
///
/// The bytes are shared with the frame they came in, not copied.
public struct JSONSlice: Sendable {
    public let base: [UInt8]
    public let range: Range<Int>

    /// The whole of `bytes` as one value (whitespace around it allowed), checked as
    /// `JSONValue(parsing:)` checks it.
    public init(validating bytes: [UInt8]) throws(JSONParseError) {
        try Self.walk(bytes, 0..<bytes.count) { (parser: inout JSONParser) throws(JSONParseError) in
            try parser.skipValue(depth: 0)
            parser.skipWhitespace()
            if parser.index != parser.bytes.count { throw JSONParseError(.trailingData, at: parser.index) }
        }
        self.init(bytes, 0..<bytes.count)
    }

    private init(_ base: [UInt8], _ range: Range<Int>) {
        self.base = base
        self.range = range
    }

    /// The value's own bytes, without the whitespace around it.
    public var bytes: ArraySlice<UInt8> {
        var lower = range.lowerBound, upper = range.upperBound
        while lower < upper, Self.isWhitespace(base[lower]) { lower += 1 }
        while upper > lower, Self.isWhitespace(base[upper - 1]) { upper -= 1 }
        return base[lower..<upper]
    }

    /// The value, built.
    public func parsed() throws(JSONParseError) -> JSONValue {
        try JSONValue(parsing: base[range])
    }

    /// An object's members in order (a later duplicate key comes later), each value as a slice;
    /// `nil` when the value is not an object.
    public func members() throws(JSONParseError) -> [(key: String, value: JSONSlice)]? {
        var members: [(key: String, value: JSONSlice)] = []
        let isObject = try Self.walk(base, range) { (parser: inout JSONParser) throws(JSONParseError) in
            parser.skipWhitespace()
            guard parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: "{") else {
                return false
            }
            var recorder = SpanRecorder()
            try parser.walkObject(depth: 1, &recorder)
            members = recorder.members.map { ($0.key, JSONSlice(base, $0.span.shifted(by: range.lowerBound))) }
            return true
        }
        return isObject ? members : nil
    }

    /// The value of `key` in an object (the last, if repeated); `nil` when absent or not an object.
    public func member(_ key: String) throws(JSONParseError) -> JSONSlice? {
        try members()?.last(where: { $0.key == key })?.value
    }

    /// An array's elements in order, each as a slice; `nil` when the value is not an array.
    public func elements() throws(JSONParseError) -> [JSONSlice]? {
        var elements: [JSONSlice] = []
        let isArray = try Self.walk(base, range) { (parser: inout JSONParser) throws(JSONParseError) in
            parser.skipWhitespace()
            guard parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: "[") else {
                return false
            }
            var recorder = SpanRecorder()
            try parser.walkArray(depth: 1, &recorder)
            elements = recorder.elements.map { JSONSlice(base, $0.shifted(by: range.lowerBound)) }
            return true
        }
        return isArray ? elements : nil
    }

    /// Runs `body` with a parser over `range` of `bytes` (its offsets are relative to the range).
    private static func walk<T>(_ bytes: [UInt8], _ range: Range<Int>,
                                _ body: (inout JSONParser) throws(JSONParseError) -> T) throws(JSONParseError) -> T {
        let result: Result<T, JSONParseError> = bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(UnsafeBufferPointer(rebasing: buffer[range]))
            do throws(JSONParseError) {
                return .success(try body(&parser))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    @inline(__always)
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}

/// Where each member and element lies. The slice was checked when it was made, so each is
/// skipped without being checked again.
private struct SpanRecorder: JSONObjectVisitor, JSONArrayVisitor {
    var members: [(key: String, span: Range<Int>)] = []
    var elements: [Range<Int>] = []
    private var key = ""

    mutating func key(_ parser: inout JSONParser) throws(JSONParseError) { key = try parser.parseString() }
    mutating func value(_ parser: inout JSONParser, depth: Int) throws(JSONParseError) {
        members.append((key, Self.skip(&parser, depth: depth)))
    }
    mutating func element(_ parser: inout JSONParser, depth: Int) throws(JSONParseError) {
        elements.append(Self.skip(&parser, depth: depth))
    }

    private static func skip(_ parser: inout JSONParser, depth: Int) -> Range<Int> {
        parser.skipWhitespace()
        let start = parser.index
        parser.skipTrustedValue()
        return start..<parser.index
    }
}

private extension Range<Int> {
    func shifted(by offset: Int) -> Range<Int> { (lowerBound + offset)..<(upperBound + offset) }
}
