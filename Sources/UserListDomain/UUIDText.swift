import Foundation

/// A UUID's 36-character text (8-4-4-4-12 hex digits), written straight into bytes. Foundation
/// formats `uuidString` through `vfprintf`, and the wire's lower case took a Unicode
/// `lowercased()` on top: 3-4% of the daemon's time where ids are bound to statements (an
/// import) or written into rows (a page's patch).
public enum UUIDText {
    public static let count = 36

    /// The lower-case text the wire protocol uses ("3f2a…").
    public static func lowercase(_ id: UUID) -> String {
        String(unsafeUninitializedCapacity: count) { buffer in
            write(id, uppercase: false, into: buffer)
            return count
        }
    }

    /// Writes the 36 bytes of `id`'s text into `buffer` (at least `count` bytes); upper case is
    /// `uuidString`'s, which the SQLite store keeps.
    public static func write(_ id: UUID, uppercase: Bool, into buffer: UnsafeMutableBufferPointer<UInt8>) {
        let digits: StaticString = uppercase ? "0123456789ABCDEF" : "0123456789abcdef"
        withUnsafeBytes(of: id.uuid) { bytes in
            digits.withUTF8Buffer { hex in
                var out = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        buffer[out] = UInt8(ascii: "-")
                        out += 1
                    }
                    buffer[out] = hex[Int(byte >> 4)]
                    buffer[out + 1] = hex[Int(byte & 0x0F)]
                    out += 2
                }
            }
        }
    }

    /// The UUID written as `text` (8-4-4-4-12 hex digits, either case), or nil: what
    /// `UUID(uuidString:)` accepts, read straight from bytes (an import reads a million ids).
    /// Whether the text is one is checked once, at the end: a branch on each random digit
    /// (number or letter) was mispredicted often enough to make this a tenth of a fresh SQLite
    /// daemon's CPU in an export; now ~60 ns an id instead of ~150.
    public static func parse(_ text: UnsafeRawBufferPointer) -> UUID? {
        guard text.count == count else { return nil }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var invalid: UInt8 = 0
        withUnsafeMutableBytes(of: &bytes) { out in
            var position = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    invalid |= text[position] ^ UInt8(ascii: "-")
                    position += 1
                }
                let high = nibble(text[position]), low = nibble(text[position + 1])
                invalid |= (high | low) & 0xF0
                out[index] = high << 4 | low
                position += 2
            }
        }
        return invalid == 0 ? UUID(uuid: bytes) : nil
    }

    /// `hexDigit` without a branch on which kind of digit: its value, or 0xFF.
    @inline(__always) private static func nibble(_ byte: UInt8) -> UInt8 {
        let digit = byte &- UInt8(ascii: "0")
        let letter = (byte | 0x20) &- UInt8(ascii: "a")
        return digit < 10 ? digit : letter < 6 ? letter &+ 10 : 0xFF
    }

    /// `parse` of a string's UTF-8 (a PostgreSQL row's text).
    public static func parse(_ text: String) -> UUID? {
        var text = text
        return text.withUTF8 { parse(UnsafeRawBufferPointer($0)) }
    }

    /// The value of one hex digit (either case), or nil: ids and JSON's `\u` escapes.
    public static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
