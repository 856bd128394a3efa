import Foundation
import Glibc
import ThreadLocks

/// Not exported by the Glibc module; the Linux value of the ioctl that reads the window size.
let TIOCGWINSZ: UInt = 0x5413

/// The controlling terminal: raw mode, the alternate screen, and putting both back.
///
/// `restore()` is idempotent and safe from any thread, so the quit path, error paths and the
/// SIGINT/SIGTERM handlers can all call it.
enum Terminal {
    private static let saved = Lock<termios?>(nil)

    static func size() -> (columns: Int, rows: Int) {
        var size = winsize()
        if ioctl(1, TIOCGWINSZ, &size) == 0, size.ws_col > 0, size.ws_row > 0 {
            return (Int(size.ws_col), Int(size.ws_row))
        }
        return (80, 24)
    }

    /// Raw input (no echo, no line buffering, no signals from keys, no flow control), the
    /// alternate screen, a hidden cursor, bracketed paste (a paste arrives as one piece, never
    /// as keys), and, with `mouse`, SGR mouse reports (wheel and clicks).
    static func enter(mouse: Bool) -> Bool {
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
        write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J\u{1B}[?2004h" + (mouse ? "\u{1B}[?1000h\u{1B}[?1006h" : ""))
        return true
    }

    /// Puts the terminal back. Under the same lock as `draw`, so a frame being written when a
    /// signal handler restores finishes first, and no frame lands on the user's screen after.
    static func restore() {
        saved.withLock { state in
            guard var original = state else { return }
            state = nil
            write("\u{1B}[?1000l\u{1B}[?1006l\u{1B}[?2004l\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l")
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
