/// Keys as the TUI understands them, decoded from what the terminal sends.
enum Key: Equatable {
    case character(Character)
    case up, down, pageUp, pageDown, home, end, left, right, delete, f1
    case enter, escape, backspace, tab
    /// Shift-Tab (`ESC [ Z`).
    case backTab
    case control(Character)  // Ctrl-letter, lower case
    /// Text pasted while bracketed paste is on: one piece, never interpreted as keys.
    case paste(String)
    case mouse(MouseEvent)
}

/// An SGR (1006) mouse report; rows and columns are 0-based screen positions.
enum MouseEvent: Equatable {
    case wheelUp, wheelDown
    case click(row: Int, column: Int)
}

/// Turns bytes from the terminal into keys. Stateful because a bracketed paste
/// (`ESC [200~ … ESC [201~`) may span several reads.
struct KeyDecoder {
    private var paste: [UInt8]?

    static let pasteStart: [UInt8] = [0x1B, 0x5B, 0x32, 0x30, 0x30, 0x7E]
    static let pasteEnd: [UInt8] = [0x1B, 0x5B, 0x32, 0x30, 0x31, 0x7E]

    /// Decodes one read with a fresh decoder (for bytes known to hold whole sequences).
    static func decode(_ bytes: [UInt8]) -> [Key] {
        var decoder = KeyDecoder()
        return decoder.decode(bytes)
    }

    /// Decodes one read's worth of bytes. A lone ESC in a read is the Escape key (terminals send
    /// an escape sequence in one write).
    mutating func decode(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var index = 0
        while index < bytes.count {
            if paste != nil {
                continuePaste(bytes[index], into: &keys)
                index += 1
            } else if bytes[index] == 0x1B {
                index = decodeEscape(bytes, at: index, into: &keys)
            } else {
                index = Self.decodePlain(bytes, at: index, into: &keys)
            }
        }
        return keys
    }

    /// Inside a paste: everything up to the end marker is text.
    private mutating func continuePaste(_ byte: UInt8, into keys: inout [Key]) {
        paste!.append(byte)
        if paste!.count >= Self.pasteEnd.count, Array(paste!.suffix(Self.pasteEnd.count)) == Self.pasteEnd {
            keys.append(.paste(String(decoding: paste!.dropLast(Self.pasteEnd.count), as: UTF8.self)))
            paste = nil
        }
    }

    /// The escape sequence at `index` (a paste's start, a mouse report, a key), or Escape alone
    /// when no whole sequence follows; returns the index after it.
    private mutating func decodeEscape(_ bytes: [UInt8], at index: Int, into keys: inout [Key]) -> Int {
        let startLength = Self.pasteStart.count
        if bytes.count - index >= startLength, Array(bytes[index..<(index + startLength)]) == Self.pasteStart {
            paste = []
            return index + startLength
        }
        guard index + 1 < bytes.count,
              bytes[index + 1] == UInt8(ascii: "[") || bytes[index + 1] == UInt8(ascii: "O") else {
            keys.append(.escape)
            return index + 1
        }
        var end = index + 2
        while end < bytes.count,
              !(0x40...0x7E).contains(bytes[end]) || (end == index + 2 && bytes[end] == UInt8(ascii: "<")) {
            end += 1
        }
        guard end < bytes.count else {
            keys.append(.escape)
            return index + 1
        }
        let body = String(decoding: bytes[(index + 2)..<end], as: UTF8.self)
        let final = Character(UnicodeScalar(bytes[end]))
        if body.hasPrefix("<"), final == "M" || final == "m" {
            if let event = Self.mouse(body.dropFirst(), pressed: final == "M") { keys.append(.mouse(event)) }
        } else if let key = Self.key(final: final, body: body) {
            keys.append(key)
        }
        return end + 1
    }

    /// The key a CSI or SS3 sequence stands for (`ESC [ A`: up, `ESC [ 5 ~`: PgUp); nil for
    /// those the TUI has no use for.
    private static func key(final: Character, body: String) -> Key? {
        switch (final, body) {
        case ("A", _): .up
        case ("B", _): .down
        case ("C", _): .right
        case ("D", _): .left
        case ("H", _): .home
        case ("F", _): .end
        case ("P", _): .f1
        case ("Z", _): .backTab
        case ("~", "5"): .pageUp
        case ("~", "6"): .pageDown
        case ("~", "3"): .delete
        case ("~", "11"): .f1
        case ("~", "1"), ("~", "7"): .home
        case ("~", "4"), ("~", "8"): .end
        default: nil
        }
    }

    /// A control byte or the UTF-8 text at `index`; returns the index after it.
    private static func decodePlain(_ bytes: [UInt8], at index: Int, into keys: inout [Key]) -> Int {
        let byte = bytes[index]
        switch byte {
        case 13, 10: keys.append(.enter); return index + 1
        case 127, 8: keys.append(.backspace); return index + 1
        case 9: keys.append(.tab); return index + 1
        case 1...26: keys.append(.control(Character(UnicodeScalar(byte + 96)))); return index + 1
        case 0..<32: return index + 1
        default: break
        }
        // UTF-8 text: take the whole scalar.
        let length = byte < 0x80 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4
        let end = min(bytes.count, index + length)
        for character in String(decoding: bytes[index..<end], as: UTF8.self) {
            keys.append(.character(character))
        }
        return end
    }

    /// `b;x;y` of an SGR report (1-based x and y); wheel and left-button presses only.
    private static func mouse(_ body: Substring, pressed: Bool) -> MouseEvent? {
        let parts = body.split(separator: ";").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        switch parts[0] {
        case 64: return .wheelUp
        case 65: return .wheelDown
        case 0 where pressed: return .click(row: parts[2] - 1, column: parts[1] - 1)
        default: return nil
        }
    }
}
