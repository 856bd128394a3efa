import UserListWire

/// A JSON array of objects written one per line, as `userctl export` and `list --all --json`
/// write them, built in bytes: a million users go out without a `String` per user or a
/// line-by-line pass of `Console.render` (which cost three quarters of an export's CPU).
///
/// Terminal safety is kept (`TerminalText`): the serializer escapes C0 already, and a line
/// holding a byte that may start DEL, a C1 control or a bidi control is rewritten through
/// `TerminalText.jsonSafe`, which writes them as `\uXXXX` (the same JSON when read back).
struct JSONLines {
    private var buffer: [UInt8] = []
    /// The last line so far: whether it takes a comma depends on what follows.
    private var held: [UInt8]?
    private var opened = false

    /// Adds `values`, one line each, and writes every line before the last.
    mutating func append(_ values: [JSONValue]) {
        for value in values {
            if let line = held {
                buffer += line
                buffer += Self.commaNewline
            } else if !opened {
                buffer += Self.open
                opened = true
            }
            var line: [UInt8] = [0x20, 0x20]
            value.serialize(into: &line)
            held = Self.terminalSafe(line)
        }
        flush()
    }

    /// Ends the array (`]`, or `[]` when empty).
    mutating func close() {
        if let line = held {
            buffer += line
            buffer += Array("\n]\n".utf8)
        } else {
            buffer += Array("[]\n".utf8)
        }
        held = nil
        flush()
    }

    /// Writes the held line with its comma and leaves the array open (an interrupted export:
    /// the output says where it stopped by missing its `]`).
    mutating func abandon() {
        if let line = held {
            buffer += line
            buffer += Array(",\n".utf8)
        }
        held = nil
        flush()
    }

    private mutating func flush() {
        guard !buffer.isEmpty else { return }
        Console.writeOut(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private static let open = Array("[\n".utf8)
    private static let commaNewline = Array(",\n".utf8)

    /// `line` as is, unless it holds a lead byte of DEL (0x7F), C1 (0xC2), U+061C (0xD8) or
    /// the bidi controls (0xE2): then through `TerminalText.jsonSafe`.
    static func terminalSafe(_ line: [UInt8]) -> [UInt8] {
        guard line.contains(where: { $0 == 0x7F || $0 == 0xC2 || $0 == 0xD8 || $0 == 0xE2 }) else { return line }
        return Array(TerminalText.jsonSafe(String(decoding: line, as: UTF8.self)).utf8)
    }
}
