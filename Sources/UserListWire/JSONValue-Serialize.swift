/// The byte-level JSON writer: the hot path of every frame the daemon sends.
///
/// Written by hand because Foundation's encoders run at roughly 50 MB/s on these machines
/// (PERF-NOTES.md), which at 1,000 rows is milliseconds per snapshot. This writer appends to one
/// growing `[UInt8]`, copies runs of plain characters in bulk, and sorts object keys so the same
/// value always produces the same bytes (golden tests and caches depend on that).
///
/// Non-finite doubles have no JSON spelling; they are written as `null` rather than producing a
/// document no peer can read.
extension JSONValue {
    /// The compact UTF-8 serialization, keys sorted.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        serialize(into: &out)
        return out
    }

    /// Appends the serialization to `out`, so a frame can be built in one buffer behind its
    /// length header.
    public func serialize(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: JSONLiteral.null)
        case .bool(let b): out.append(contentsOf: b ? JSONLiteral.true : JSONLiteral.false)
        case .int(let i): JSONWriter.writeInt(i, into: &out)
        case .double(let d): JSONWriter.writeDouble(d, into: &out)
        case .string(let s): JSONWriter.writeString(s, into: &out)
        case .array(let a):
            out.append(UInt8(ascii: "["))
            var first = true
            for element in a {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                element.serialize(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let o):
            out.append(UInt8(ascii: "{"))
            var first = true
            for (key, value) in o.sorted(by: { $0.key < $1.key }) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                JSONWriter.writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                value.serialize(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}

enum JSONLiteral {
    static let null: [UInt8] = Array("null".utf8)
    static let `true`: [UInt8] = Array("true".utf8)
    static let `false`: [UInt8] = Array("false".utf8)
}

/// The writer's pieces, public so a producer that knows its values' shape (the daemon's rows)
/// writes them straight into a frame, in the bytes `JSONValue.serialize` would give them,
/// instead of building a `JSONValue` to serialize.
public enum JSONWriter {
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    public static func writeInt(_ value: Int64, into out: inout [UInt8]) {
        if value == 0 { out.append(UInt8(ascii: "0")); return }
        var magnitude = value.magnitude
        if value < 0 { out.append(UInt8(ascii: "-")) }
        // 20 digits hold UInt64.max; fill from the right, then copy.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var position = 20
            while magnitude > 0 {
                position -= 1
                digits[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[position..<20]))
        }
    }

    public static func writeDouble(_ value: Double, into out: inout [UInt8]) {
        guard value.isFinite else { out.append(contentsOf: JSONLiteral.null); return }
        if let exact = Int64(exactly: value), abs(value) < 1e15 {
            // Integral doubles are written as integers ("3" not "3.0"): the same number to every
            // JSON reader, and shorter.
            writeInt(exact, into: &out)
            return
        }
        // Swift's description is the shortest text that round-trips, and always valid JSON for
        // finite values ("1e-05", "5e+20", "0.1").
        out.append(contentsOf: value.description.utf8)
    }

    public static func writeString(_ value: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        writeEscaped(value, into: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// A JSON Pointer as a JSON string: the bytes of `writeString(pointer.description)`, without
    /// building the description (a page's patch writes one pointer per row, and building them
    /// was 8% of the daemon's time serving pages).
    public static func writePointer(_ pointer: JSONPointer, into out: inout [UInt8]) {
        writePointer(pointer, appendingIndex: nil, into: &out)
    }

    /// `pointer` with one more token, an array index, as a JSON string: the path of an array's
    /// element written without building a pointer for each element.
    public static func writePointer(_ pointer: JSONPointer, appendingIndex index: Int?, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for token in pointer.tokens {
            out.append(UInt8(ascii: "/"))
            writeEscaped(JSONPointer.escaped(token), into: &out)
        }
        if let index {
            out.append(UInt8(ascii: "/"))
            writeInt(Int64(index), into: &out)
        }
        out.append(UInt8(ascii: "\""))
    }

    /// The inside of a JSON string: `value` with quotes, backslashes and control bytes escaped.
    private static func writeEscaped(_ value: String, into out: inout [UInt8]) {
        var value = value
        value.withUTF8 { bytes in
            var runStart = 0
            var index = 0
            let count = bytes.count
            while index < count {
                let byte = bytes[index]
                if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                    index += 1
                    continue
                }
                if runStart < index {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                }
                out.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                case 0x08: out.append(UInt8(ascii: "b"))
                case 0x0C: out.append(UInt8(ascii: "f"))
                default:
                    out.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                            hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]])
                }
                index += 1
                runStart = index
            }
            if runStart < count {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<count]))
            }
        }
    }
}
