import Foundation
import Glibc
import Synchronization
import UserListWire

/// Everything userctl writes for a person or a script goes through here, so that
/// `TerminalText` is applied to every line: stdout as human text or JSON, stderr always human.
///
/// Styling (bold, dim, colours) is carried by private-use markers that `Style` puts around
/// already-escaped text and that `Console` turns into SGR sequences after escaping; a marker
/// smuggled in through data can at worst switch bold or colour, never move the cursor or
/// retitle the terminal.
enum Console {
    /// Set once at start: with `--json`, stdout carries JSON and unsafe characters become `\uXXXX`.
    static let jsonOutput = Atomic<Bool>(false)

    static let styleStart: Unicode.Scalar = "\u{F8F0}"
    static let styleEnd: Unicode.Scalar = "\u{F8F1}"

    /// One line (or several) for stdout.
    static func out(_ text: String, terminator: String = "\n") {
        write(1, (jsonOutput.load(ordering: .relaxed) ? TerminalText.jsonSafe(text) : render(text)) + terminator)
    }

    /// One message for stderr, always human text.
    static func err(_ text: String) {
        write(2, render(text) + "\n")
    }

    /// One JSON value on one line of stderr (`--json` errors), unsafe characters as `\uXXXX`.
    static func errJSON(_ value: JSONValue) {
        write(2, TerminalText.jsonSafe(value.description) + "\n")
    }

    /// Escapes unsafe characters, then turns style markers into SGR sequences.
    /// Line breaks are kept (help and tables span lines); data printed inside a line is escaped
    /// by its caller with `TerminalText.visible`, which also shows a newline as `\x0a`.
    static func render(_ text: String) -> String {
        let safe = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { TerminalText.visible(String($0)) }.joined(separator: "\n")
        guard safe.unicodeScalars.contains(where: { $0 == styleStart || $0 == styleEnd }) else { return safe }
        var out = ""
        var scalars = safe.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            if scalar == styleStart, let code = scalars.next() {
                out += "\u{1B}[\(code.value - 0xF800)m"
            } else if scalar == styleEnd {
                out += "\u{1B}[0m"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Bytes for stdout that the caller already made safe (`JSONLines`).
    static func writeOut(_ bytes: [UInt8]) {
        write(1, bytes)
    }

    private static func write(_ fd: Int32, _ text: String) {
        write(fd, Array(text.utf8))
    }

    private static func write(_ fd: Int32, _ bytes: [UInt8]) {
        var bytes = bytes
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                if fd == 1 { outputFailed(code) }
                return
            }
            offset += n
        }
    }

    /// stdout refused a write: nothing more this run prints can reach anyone, and an export
    /// to a full disk must not look like a finished one. A reader that went away (`| head`)
    /// ends userctl as SIGPIPE would have (userctl ignores it), quietly; any other failure
    /// (a full disk, an I/O error) is said, with EX_IOERR.
    private static func outputFailed(_ code: Int32) -> Never {
        if code == EPIPE { exit(128 + SIGPIPE) }
        let why = String(cString: strerror(code))
        write(2, render("userctl: cannot write the output: \(why); what was written is incomplete") + "\n")
        exit(ExitCode.ioError.rawValue)
    }
}

/// Swift's `print`, routed through `Console` for every file of userctl: a line printed anywhere
/// in this module is made harmless without each call site having to remember.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    Console.out(items.map { "\($0)" }.joined(separator: separator), terminator: terminator)
}
