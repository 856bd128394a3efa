import Foundation
import UserListClient
import UserListWire

/// What every screen of the TUI draws alike: the message of the moment, the hint bar, the
/// status line, and text wrapped to the width (each screen has its own file).
extension TUI {
    static let spinnerFrames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

    static let staleMeaning = " · [stale]: users changed elsewhere; rows not loaded yet may have moved (r reloads)"

    /// The message of the moment, wrapped to the width (at most a third of the screen, at
    /// least one row); one empty row when there is none.
    func bannerLines(_ screenError: String?) -> [Line] {
        guard let message = banner ?? screenError else { return [Line("")] }
        let most = max(1, size.rows / 3)
        var pieces = Self.wrap("⚠ \(message)  (Esc dismisses)", width: max(1, size.columns - 2)).map { " " + $0 }
        if pieces.count > most {
            pieces = Array(pieces.prefix(most))
            pieces[most - 1] = DisplayWidth.truncate(pieces[most - 1] + " …", to: size.columns)
        }
        return pieces.map { Line($0, .error) }
    }

    /// How many rows the list's message takes (`listRows` gives way to it).
    var listBannerRows: Int { bannerLines(document.list?.errorMessage).count }

    func statusLine() -> Line {
        let state: String
        switch connection {
        case .connected(let welcome): state = "● connected" + (welcome.access == .readOnly ? " (read-only)" : "")
        case .connecting: state = "○ connecting…"
        case .reconnecting(let attempt): state = "○ reconnecting… (attempt \(attempt))"
        case .closed(let reason): state = "✕ disconnected: \(reason)"
        }
        // What the list's `[stale]` means, said where the eye goes for the state of things.
        let onList = !document.showsDetail && !document.showsHistory
        let stale = onList && listLooksStale ? Self.staleMeaning : ""
        // How much of the list is read (the title says where the cursor is in the whole list).
        var loaded = ""
        if onList, let list = document.list, let total = list.totalCount, list.rowCount < total || list.hasMore {
            loaded = " · \(Self.counted(list.rowCount)) of \(Self.counted(total)) loaded"
        }
        return Line(" \(state)\(loaded)\(stale)   session \(client.configuration.sessionKey)", .reverse)
    }

    /// As many hints as fit the width, in the order given; the help key always shows.
    func hintBar(_ hints: [String], help: String) -> Line {
        var text = "  " + help
        for hint in hints {
            let candidate = text + " · " + hint
            if DisplayWidth.of(candidate) > size.columns { break }
            text = candidate
        }
        return Line(text, .dim)
    }

    /// `pieces` as lines of at most `width` columns, indented by two: the first piece and the
    /// next joined by a space, the others by " · "; a piece wider than a line is cut.
    static func wrapped(_ pieces: [String], width: Int, indent: Int = 2) -> [String] {
        var lines: [String] = []
        var current = ""
        let margin = String(repeating: " ", count: indent)
        for (index, piece) in pieces.enumerated() {
            let joiner = current.isEmpty ? margin : (index == 1 ? " " : " · ")
            if !current.isEmpty, DisplayWidth.of(current + joiner + piece) > width {
                lines.append(current)
                current = margin + piece
            } else {
                current += joiner + piece
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }

    /// `text` in lines of at most `width` columns, broken between words (a word wider than
    /// the width is broken where it must be).
    static func wrap(_ text: String, width: Int) -> [String] {
        let width = max(1, width)
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true).map(String.init) {
            let candidate = line.isEmpty ? word : line + " " + word
            if DisplayWidth.of(candidate) <= width { line = candidate; continue }
            if !line.isEmpty { lines.append(line) }
            line = ""
            for character in word {
                if DisplayWidth.of(line + String(character)) > width { lines.append(line); line = "" }
                line.append(character)
            }
        }
        if !line.isEmpty || lines.isEmpty { lines.append(line) }
        return lines
    }
}
