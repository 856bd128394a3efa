import UserListWire

/// A JSON array of objects written one per line, as `userctl export` and `list --all --json`
/// write them, built in bytes: a million users go out without a `String` per user or a
/// line-by-line pass of `Console.render` (which cost three quarters of an export's CPU).
///
/// Each value is written as the bytes it came in (`JSONSlice`): the daemon writes a user as
/// `JSONValue.serialize` would, so the file is the same as if each were parsed and written back,
/// at a fraction of the cost. Commas go before each line after the first, so a line is written
/// as soon as it is known.
///
/// Terminal safety is kept (`TerminalText`): JSON text holds no raw C0 byte, and a line holding
/// a byte that may start DEL, a C1 control or a bidi control is rewritten through
/// `TerminalText.jsonSafe`, which writes them as `\uXXXX` (the same JSON when read back).
struct JSONLines {
    private var buffer: [UInt8] = []
    private var lines = 0
    /// Where the lines go: standard output, or a test's buffer.
    private let write: ([UInt8]) -> Void

    init(write: @escaping ([UInt8]) -> Void = Console.writeOut) {
        self.write = write
    }

    /// Adds `values`, one line each, and writes them. A value spread over lines (not this
    /// daemon's JSON) is written compact.
    mutating func append(_ values: [JSONSlice]) {
        for value in values {
            buffer += lines == 0 ? Self.open : Self.commaNewline
            lines += 1
            let bytes = value.bytes
            if bytes.contains(where: { $0 == 0x0A || $0 == 0x0D }), let parsed = try? value.parsed() {
                var line: [UInt8] = []
                parsed.serialize(into: &line)
                buffer += Self.terminalSafe(line)
            } else if Self.needsEscapes(bytes) {
                buffer += Self.terminalSafe(Array(bytes))
            } else {
                buffer += bytes
            }
        }
        flush()
    }

    /// Ends the array (`]`, or `[]` when empty).
    mutating func close() {
        buffer += lines == 0 ? Array("[]\n".utf8) : Array("\n]\n".utf8)
        flush()
    }

    /// Leaves the array open after a comma (an interrupted export: the output says where it
    /// stopped by missing its `]`).
    mutating func abandon() {
        if lines > 0 { buffer += Array(",\n".utf8) }
        flush()
    }

    private mutating func flush() {
        guard !buffer.isEmpty else { return }
        write(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private static let open = Array("[\n  ".utf8)
    private static let commaNewline = Array(",\n  ".utf8)

    /// Whether `line` holds a lead byte of DEL (0x7F), C1 (0xC2), U+061C (0xD8) or the bidi
    /// controls (0xE2).
    static func needsEscapes(_ line: some Collection<UInt8>) -> Bool {
        line.contains(where: { $0 == 0x7F || $0 == 0xC2 || $0 == 0xD8 || $0 == 0xE2 })
    }

    /// `line` as is, unless `needsEscapes`: then through `TerminalText.jsonSafe`.
    static func terminalSafe(_ line: [UInt8]) -> [UInt8] {
        guard needsEscapes(line) else { return line }
        return Array(TerminalText.jsonSafe(String(decoding: line, as: UTF8.self)).utf8)
    }
}
