import Foundation
import UserListClient
import UserListWire

/// The help overlay: every key of the screen below it, wrapped to the width and scrolled.
extension TUI {
    /// Every key of the current screen, wrapped to the width; j/k, arrows, PgUp/PgDn scroll it
    /// (`helpScroll`), any other key closes it.
    func helpLines() -> [Line] {
        let keys = document.showsHistory ? Self.historyKeys : document.showsDetail ? Self.detailKeys : Self.listKeys
        let screen = document.showsHistory ? "history" : document.showsDetail ? "user screen" : "user list"
        let title = header("Help: " + screen)
        let body = helpBody(keys)
        let room = max(1, size.rows - 3)  // the title, the footer, the status line
        helpScroll = max(0, min(helpScroll, body.count - room))
        var lines = [title] + body.dropFirst(helpScroll).prefix(room).map { Line($0) }
        while lines.count < size.rows - 2 { lines.append(Line("")) }
        let more = body.count > room
        let footer = more
            ? "  \(helpScroll + 1)–\(min(body.count, helpScroll + room)) of \(body.count)"
                + " · j/k ↑↓ PgUp/PgDn scroll · other keys close"
            : "  Press any key to close this help."
        lines = Array(lines.prefix(max(0, size.rows - 2)))
        lines.append(Line(footer, .dim))
        lines.append(statusLine())
        return Array(lines.suffix(size.rows))
    }

    /// The help's rows: each key, then what it does, wrapped under itself; on a narrow screen
    /// the keys on a row of their own, what they do indented under them.
    func helpBody(_ keys: [(keys: String, does: String)]) -> [String] {
        let columns = max(10, size.columns)
        let keyWidth = (keys.map { DisplayWidth.of($0.keys) }.max() ?? 0) + 2
        var body = [""]
        if columns - 2 - keyWidth >= 24 {
            let indent = String(repeating: " ", count: 2 + keyWidth)
            for entry in keys {
                for (index, piece) in Self.wrap(entry.does, width: columns - 2 - keyWidth).enumerated() {
                    body.append(index == 0 ? "  " + DisplayWidth.pad(entry.keys, to: keyWidth) + piece : indent + piece)
                }
            }
        } else {
            for entry in keys {
                body += Self.wrap(entry.keys, width: columns - 2).map { "  " + $0 }
                body += Self.wrap(entry.does, width: columns - 5).map { "     " + $0 }
            }
        }
        return body
    }
}
