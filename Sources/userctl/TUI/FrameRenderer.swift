import Glibc

/// One screen line: plain text plus how to draw it. Kept apart so widths are measured on the
/// text, never on escape sequences.
struct Line: Equatable {
    enum Look: Equatable { case plain, bold, dim, reverse, boldReverse, error }

    var text: String
    var look: Look = .plain
    /// Character ranges of `text` drawn highlighted (search matches).
    var marks: [Range<Int>] = []

    init(_ text: String, _ look: Look = .plain, marks: [Range<Int>] = []) {
        self.text = text
        self.look = look
        self.marks = marks
    }
}

/// Draws frames by writing only the rows that differ from the previous frame.
///
/// With NO_COLOR set (https://no-color.org) nothing is drawn in colour: errors are bold reverse
/// video instead of white on red, search matches underlined instead of underlined yellow.
struct FrameRenderer {
    /// Whether colours may be drawn: NO_COLOR unset (read once; the TUI never changes it).
    static let colourAllowed = getenv("NO_COLOR") == nil
    private var previous: [Line] = []
    private var previousWidth = 0

    /// Forget the previous frame (after a resize or when the screen may have been scribbled on).
    mutating func invalidate() {
        previous = []
    }

    /// The escape sequences turning the last frame into `lines` on a `width`-column screen.
    mutating func render(_ lines: [Line], width: Int) -> String {
        var out = ""
        if width != previousWidth || lines.count != previous.count {
            out += "\u{1B}[2J"
            previous = []
            previousWidth = width
        }
        for (row, line) in lines.enumerated() {
            if row < previous.count, previous[row] == line { continue }
            out += "\u{1B}[\(row + 1);1H" + Self.draw(line, width: width)
        }
        previous = lines
        return out
    }

    /// The line cut or padded to exactly `width` columns, so it never wraps into the next row.
    static func draw(_ line: Line, width: Int, colour: Bool = colourAllowed) -> String {
        let text = DisplayWidth.pad(DisplayWidth.sanitized(line.text), to: width)
        let start: String
        switch line.look {
        case .plain: start = ""
        case .bold: start = "\u{1B}[1m"
        case .dim: start = "\u{1B}[2m"
        case .reverse: start = "\u{1B}[7m"
        case .boldReverse: start = "\u{1B}[1;7m"
        case .error: start = colour ? "\u{1B}[1;37;41m" : "\u{1B}[1;7m"
        }
        if !line.marks.isEmpty { return drawMarked(text, start: start, marks: line.marks, colour: colour) }
        return start.isEmpty ? text : start + text + "\u{1B}[0m"
    }

    /// Search matches: underlined yellow (underlined alone under NO_COLOR), the rest in the
    /// line's own look.
    static func markStart(colour: Bool) -> String { colour ? "\u{1B}[4;33m" : "\u{1B}[4m" }

    private static func drawMarked(_ text: String, start: String, marks: [Range<Int>], colour: Bool) -> String {
        var out = start
        var inMark = false
        for (offset, character) in text.enumerated() {
            let marked = marks.contains { $0.contains(offset) }
            if marked != inMark {
                out += marked ? markStart(colour: colour) : "\u{1B}[0m" + start
                inMark = marked
            }
            out.append(character)
        }
        return out + "\u{1B}[0m"
    }
}
