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
                // Inside a paste: everything up to the end marker is text.
                paste!.append(bytes[index])
                index += 1
                if paste!.count >= Self.pasteEnd.count, Array(paste!.suffix(Self.pasteEnd.count)) == Self.pasteEnd {
                    keys.append(.paste(String(decoding: paste!.dropLast(Self.pasteEnd.count), as: UTF8.self)))
                    paste = nil
                }
                continue
            }
            let byte = bytes[index]
            if byte == 0x1B {
                if bytes.count - index >= Self.pasteStart.count, Array(bytes[index..<(index + Self.pasteStart.count)]) == Self.pasteStart {
                    paste = []
                    index += Self.pasteStart.count
                    continue
                }
                guard index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "[") || bytes[index + 1] == UInt8(ascii: "O") else {
                    keys.append(.escape)
                    index += 1
                    continue
                }
                var end = index + 2
                while end < bytes.count, !(0x40...0x7E).contains(bytes[end]) || (end == index + 2 && bytes[end] == UInt8(ascii: "<")) { end += 1 }
                guard end < bytes.count else { keys.append(.escape); index += 1; continue }
                let body = String(decoding: bytes[(index + 2)..<end], as: UTF8.self)
                let final = Character(UnicodeScalar(bytes[end]))
                if body.hasPrefix("<"), final == "M" || final == "m" {
                    if let event = Self.mouse(body.dropFirst(), pressed: final == "M") { keys.append(.mouse(event)) }
                    index = end + 1
                    continue
                }
                switch (final, body) {
                case ("A", _): keys.append(.up)
                case ("B", _): keys.append(.down)
                case ("C", _): keys.append(.right)
                case ("D", _): keys.append(.left)
                case ("H", _): keys.append(.home)
                case ("F", _): keys.append(.end)
                case ("P", _): keys.append(.f1)
                case ("Z", _): keys.append(.backTab)
                case ("~", "5"): keys.append(.pageUp)
                case ("~", "6"): keys.append(.pageDown)
                case ("~", "3"): keys.append(.delete)
                case ("~", "11"): keys.append(.f1)
                case ("~", "1"), ("~", "7"): keys.append(.home)
                case ("~", "4"), ("~", "8"): keys.append(.end)
                default: break
                }
                index = end + 1
                continue
            }
            switch byte {
            case 13, 10: keys.append(.enter); index += 1; continue
            case 127, 8: keys.append(.backspace); index += 1; continue
            case 9: keys.append(.tab); index += 1; continue
            case 1...26: keys.append(.control(Character(UnicodeScalar(byte + 96)))); index += 1; continue
            case 0..<32: index += 1; continue
            default: break
            }
            // UTF-8 text: take the whole scalar.
            let length = byte < 0x80 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4
            let end = min(bytes.count, index + length)
            for character in String(decoding: bytes[index..<end], as: UTF8.self) {
                keys.append(.character(character))
            }
            index = end
        }
        return keys
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
