import Foundation
import Glibc

/// Reads the users of an import file one at a time from a file (or stdin), in constant memory:
/// the file is read in blocks and each element's bytes are cut out by tracking nesting and
/// strings, so a 160 MB import never sits in memory whole. Each element is then parsed on its
/// own (`JSONValue(parsing:)`), which finds every syntax error inside it.
///
/// Two shapes: a top-level JSON array (an element ends at a `,` or `]` at depth 1, outside
/// strings), or objects one after another, as JSON Lines has them (`jq -c '.[]'`, log
/// pipelines; an element ends at the `}` closing depth 1). A UTF-8 byte-order mark before
/// either is skipped, as editors on other systems write one. What it does not check itself is
/// left to the per-element parse.
final class JSONArrayReader {
    enum ReadError: Error {
        case notAnArray(String)
        case truncated(String)
        case unreadable(String)
    }

    private let fd: Int32
    private let ownsFD: Bool
    /// The input as messages name it.
    private let name: String
    private var buffer: [UInt8] = []
    private var position = 0
    private var atEnd = false
    private var started = false
    private var finished = false
    /// The input is objects one after another (JSON Lines), not an array.
    private var objectPerLine = false
    /// An element looked at ahead (`peekNext`), handed out by the next `next()`.
    private var peeked: ArraySlice<UInt8>?
    private var dropped = 0
    /// Bytes consumed so far (for progress against the file size).
    var bytesRead: Int { dropped + position }
    /// The file's size, when it is a regular file.
    let size: Int?

    static let blockSize = 1 << 20

    init(path: String) throws(ReadError) {
        name = path == "-" ? "stdin" : path
        if path == "-" {
            fd = 0
            ownsFD = false
        } else {
            fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw .unreadable("cannot open \(path): \(String(cString: strerror(errno)))") }
            ownsFD = true
        }
        var info = stat()
        size = fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG ? Int(info.st_size) : nil
    }

    deinit { if ownsFD { close(fd) } }

    static let shapes = "a JSON array of users, or one user object per line (JSON Lines)"

    /// The first byte of the input after a byte-order mark and spaces, without consuming it
    /// (nil for an empty input).
    func peekFirst() throws(ReadError) -> UInt8? {
        try skipByteOrderMark()
        try skipSpace()
        return try byte()
    }

    /// The next element without consuming it (the first object decides whether a file is a
    /// REST page or JSON Lines).
    func peekNext() throws(ReadError) -> ArraySlice<UInt8>? {
        if peeked == nil { peeked = try next() }
        return peeked
    }

    /// The bytes of the next element, or nil after the closing `]` (or the last object).
    func next() throws(ReadError) -> ArraySlice<UInt8>? {
        if let element = peeked {
            peeked = nil
            return element
        }
        if finished {
            try checkNothingAfterTheArray()
            return nil
        }
        if !started {
            switch try peekFirst() {
            case UInt8(ascii: "["):
                position += 1
                try skipSpace()
                if try byte() == UInt8(ascii: "]") {
                    position += 1
                    finished = true
                    try checkNothingAfterTheArray()
                    return nil
                }
            case UInt8(ascii: "{"): objectPerLine = true
            default: throw .notAnArray("it must hold \(Self.shapes)")
            }
            started = true
        }
        try skipSpace()
        compact()
        if objectPerLine { return try nextObject() }
        let start = position
        let end = try scan(truncated: "the file ends inside the array (is it complete?)") { byte, depth in
            depth == 0 && (byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]"))
        }
        let element = buffer[start..<(position - 1)]
        if end == UInt8(ascii: "]") { finished = true }
        if element.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
            throw .notAnArray("an empty element in the array (a stray comma?)")
        }
        return element
    }

    /// Refuses anything but spaces after the array's closing `]`: a second array or stray text
    /// would otherwise be dropped without a word.
    private func checkNothingAfterTheArray() throws(ReadError) {
        guard !objectPerLine else { return }
        try skipSpace()
        if try byte() != nil {
            throw .notAnArray("after the array's closing ']' only spaces may follow "
                              + "(a second array, or text after it?)")
        }
    }

    /// The next top-level object of a JSON Lines input, or nil at the end of the input.
    private func nextObject() throws(ReadError) -> ArraySlice<UInt8>? {
        guard let first = try byte() else {
            finished = true
            return nil
        }
        guard first == UInt8(ascii: "{") else {
            throw .notAnArray("after an object, only another object may follow (one user per line)")
        }
        let start = position
        _ = try scan(truncated: "the file ends inside a user (is it complete?)") { byte, depth in
            depth == 1 && (byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]"))
        }
        return buffer[start..<position]
    }

    /// Steps over the input from `position`, handing each bracket, brace and comma outside
    /// strings, with the nesting depth before it, to `ends` until that says the element ends
    /// there; returns that byte (`position` is past it). A closer at depth 0 stays where it is,
    /// so a stray one is left inside its element for the per-element parse to refuse.
    private func scan(truncated: String, ends: (_ byte: UInt8, _ depth: Int) -> Bool) throws(ReadError) -> UInt8 {
        var depth = 0
        var inString = false
        var escaped = false
        while true {
            if position == buffer.count, !(try fill()) { throw .truncated(truncated) }
            let c = buffer[position]
            position += 1
            if inString {
                if escaped {
                    escaped = false
                } else if c == UInt8(ascii: "\\") {
                    escaped = true
                } else if c == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch c {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ","):
                if ends(c, depth) { return c }
                if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") {
                    depth += 1
                } else if c != UInt8(ascii: ","), depth > 0 {
                    depth -= 1
                }
            default: break
            }
        }
    }

    // MARK: buffer

    private func skipByteOrderMark() throws(ReadError) {
        guard !started, dropped == 0, position == 0 else { return }
        while buffer.count < 3, try fill() {}
        if buffer.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    private func byte() throws(ReadError) -> UInt8? {
        if position == buffer.count, !(try fill()) { return nil }
        return buffer[position]
    }

    private func skipSpace() throws(ReadError) {
        while let c = try byte(), c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D {
            position += 1
        }
    }

    /// Drops consumed bytes so the buffer holds one element and a block at most.
    private func compact() {
        if position > Self.blockSize {
            buffer.removeFirst(position)
            dropped += position
            position = 0
        }
    }

    /// Appends the next block; false at end of input.
    private func fill() throws(ReadError) -> Bool {
        if atEnd { return false }
        var block = [UInt8](repeating: 0, count: Self.blockSize)
        while true {
            let n = block.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .unreadable("cannot read \(name): \(String(cString: strerror(errno)))")
            }
            if n == 0 { atEnd = true; return false }
            buffer.append(contentsOf: block[0..<n])
            return true
        }
    }
}
