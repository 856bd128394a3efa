import Foundation

/// A UUID's text form as the store keeps ids: `uuidString`'s bytes (upper-case hex, 8-4-4-4-12),
/// written straight into a buffer. Foundation formats `uuidString` through `vfprintf`, 3% of a
/// bulk import's time, for every id bound to a statement.
enum UUIDText {
    static let count = 36

    /// Writes the 36 bytes of `id`'s text into `buffer` (at least `count` bytes).
    static func write(_ id: UUID, into buffer: UnsafeMutableBufferPointer<UInt8>) {
        let digits: StaticString = "0123456789ABCDEF"
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
}
