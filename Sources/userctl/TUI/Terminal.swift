import Foundation
import Glibc
import Synchronization

/// Not exported by the Glibc module; the Linux value of the ioctl that reads the window size.
let TIOCGWINSZ: UInt = 0x5413

/// The controlling terminal: raw mode, the alternate screen, and putting both back.
///
/// `restore()` is idempotent and safe from any thread, so the quit path, error paths and the
/// SIGINT/SIGTERM handlers can all call it.
enum Terminal {
    private static let saved = Mutex<termios?>(nil)

    static func size() -> (columns: Int, rows: Int) {
        var size = winsize()
        if ioctl(1, TIOCGWINSZ, &size) == 0, size.ws_col > 0, size.ws_row > 0 {
            return (Int(size.ws_col), Int(size.ws_row))
        }
        return (80, 24)
    }

    /// Raw input (no echo, no line buffering, no signals from keys, no flow control), the
    /// alternate screen, and a hidden cursor.
    static func enter() -> Bool {
        var original = termios()
        guard tcgetattr(0, &original) == 0 else { return false }
        saved.withLock { $0 = original }
        var raw = original
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_oflag &= ~tcflag_t(OPOST)
        raw.c_cflag |= tcflag_t(CS8)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(0, TCSAFLUSH, &raw)
        write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J")
        return true
    }

    /// Puts the terminal back. Under the same lock as `draw`, so a frame being written when a
    /// signal handler restores finishes first, and no frame lands on the user's screen after.
    static func restore() {
        saved.withLock { state in
            guard var original = state else { return }
            state = nil
            write("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l")
            tcsetattr(0, TCSAFLUSH, &original)
        }
    }

    /// Writes a frame, unless the terminal has been restored already.
    static func draw(_ text: String) {
        guard !text.isEmpty else { return }
        saved.withLock { state in
            if state != nil { write(text) }
        }
    }

    static func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(1, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 { if errno == EINTR { continue }; return }
            offset += n
        }
    }
}

/// Keys as the TUI understands them, decoded from what the terminal sends.
enum Key: Equatable {
    case character(Character)
    case up, down, pageUp, pageDown, home, end, left, right
    case enter, escape, backspace, tab
    case control(Character)  // Ctrl-letter, lower case
}

enum KeyDecoder {
    /// Decodes one read's worth of bytes. A lone ESC in a read is the Escape key (terminals send
    /// an escape sequence in one write).
    static func decode(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x1B {
                guard index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "[") || bytes[index + 1] == UInt8(ascii: "O") else {
                    keys.append(.escape)
                    index += 1
                    continue
                }
                var end = index + 2
                while end < bytes.count, !(0x40...0x7E).contains(bytes[end]) { end += 1 }
                guard end < bytes.count else { keys.append(.escape); index += 1; continue }
                let body = String(decoding: bytes[(index + 2)..<end], as: UTF8.self)
                switch (Character(UnicodeScalar(bytes[end])), body) {
                case ("A", _): keys.append(.up)
                case ("B", _): keys.append(.down)
                case ("C", _): keys.append(.right)
                case ("D", _): keys.append(.left)
                case ("H", _): keys.append(.home)
                case ("F", _): keys.append(.end)
                case ("~", "5"): keys.append(.pageUp)
                case ("~", "6"): keys.append(.pageDown)
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
}
