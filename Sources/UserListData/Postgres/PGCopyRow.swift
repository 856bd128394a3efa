import Foundation
import UserListDomain

/// One row of `COPY ... TO STDOUT` (text format) split in place: each field is a range of the
/// row's bytes, turned into a value only when asked, and unescaped only when it holds a
/// backslash. An export reads hundreds of thousands of rows; `PGCopyText.fields` builds an
/// array and a string per field for each, this builds only the strings a `User` keeps.
///
/// Reuse one reader for every row (`split` keeps its storage); the bytes must outlive the reads.
struct PGCopyRow {
    private var bytes = UnsafeRawBufferPointer(start: nil, count: 0)
    /// Field `i` is `bytes[starts[i] ..< starts[i + 1] - 1]` (the last ends at `end`).
    private var starts: [Int] = []
    private var end = 0
    /// Scratch for unescaping a field.
    private var unescaped: [UInt8] = []

    var count: Int { starts.count }

    /// Reads the field boundaries of `row` (tabs separate fields: a tab inside a value is sent
    /// as `\t`; the row's trailing newline is not part of the last field).
    mutating func split(_ row: UnsafeRawBufferPointer) {
        bytes = row
        end = row.count
        if end > 0 && row[end - 1] == 0x0A { end -= 1 }
        starts.removeAll(keepingCapacity: true)
        starts.append(0)
        for index in 0..<end where row[index] == 0x09 { starts.append(index + 1) }
    }

    private func field(_ index: Int) -> UnsafeRawBufferPointer {
        let stop = index + 1 < starts.count ? starts[index + 1] - 1 : end
        return UnsafeRawBufferPointer(rebasing: bytes[starts[index]..<stop])
    }

    /// NULL is sent as `\N`, alone.
    func isNull(_ index: Int) -> Bool {
        let value = field(index)
        return value.count == 2 && value[0] == 0x5C && value[1] == 0x4E
    }

    /// The field as text, COPY's escapes undone; nil for NULL.
    mutating func string(_ index: Int) -> String? {
        if isNull(index) { return nil }
        let value = field(index)
        guard value.contains(0x5C) else { return String(decoding: value, as: UTF8.self) }
        unescaped.removeAll(keepingCapacity: true)
        var escaped = false
        for byte in value {
            if escaped {
                escaped = false
                switch byte {
                case 0x74: unescaped.append(0x09)  // \t
                case 0x6E: unescaped.append(0x0A)  // \n
                case 0x72: unescaped.append(0x0D)  // \r
                case 0x62: unescaped.append(0x08)  // \b
                case 0x66: unescaped.append(0x0C)  // \f
                case 0x76: unescaped.append(0x0B)  // \v
                default: unescaped.append(byte)    // \\ and any other escaped byte: itself
                }
            } else if byte == 0x5C {
                escaped = true
            } else {
                unescaped.append(byte)
            }
        }
        return String(decoding: unescaped, as: UTF8.self)
    }

    /// The field as a UUID (its text never holds an escape), or nil.
    func uuid(_ index: Int) -> UUID? { UUIDText.parse(field(index)) }

    /// The field as a decimal integer (optionally negative), or nil.
    func int(_ index: Int) -> Int? {
        let value = field(index)
        var digits = value[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var result = 0
        for byte in digits {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            result = result * 10 + Int(byte - 0x30)
        }
        return negative ? -result : result
    }
}
