import Foundation
import UserListClient
import UserListWire

/// The user list: its title (where the cursor is in the whole list), its rows, the line of
/// keys or of what is on its way, and the search matching that marks what matched.
extension TUI {
    /// Every key of each screen, for the help overlay (and, shortest first, the hint bar).
    static let listKeys: [(keys: String, does: String)] = [
        ("j k ↑ ↓", "move"), ("PgDn Space / PgUp", "a screen down / up (Ctrl-F / Ctrl-B)"),
        ("g Home / G End", "first user / last user of the whole list"),
        ("Enter", "open the user"), ("h", "history of the user under the cursor: who changed it, and undo"),
        ("a", "add a user: an empty user screen whose save creates the user"),
        ("d", "remove the user under the cursor (asks \"Remove NAME (EMAIL)? y/N\" first; only y removes)"),
        ("●", "someone else has this user open now"),
        ("/", "search (Enter applies, Esc cancels, Ctrl-U clears, Ctrl-W deletes a word)"),
        ("Esc", "clear the search, or dismiss a message"), ("x", "dismiss a message"),
        ("r", "refresh (reads the list again; clears [stale])"),
        ("[stale]", "changed elsewhere: rows not loaded yet may have moved; r reloads"),
        ("wheel / click", "scroll / select (off with --no-mouse)"), ("? F1", "this help"), ("q", "quit"),
        ("Ctrl-C", "quit, keeping the session: userctl in this terminal comes back to it"),
    ]

    /// Where the cursor is in the whole list, counted from 1 ("Users 312 of 5,000"): its row
    /// when the list is read from its first row, counted back from the total when it was opened
    /// at its end (`G`); `nil` when that is not known (or the list is empty).
    var cursorPlace: Int? {
        guard let list = document.list, list.rowCount > 0 else { return document.list == nil ? nil : 0 }
        if !list.hasPrevious { return cursor + 1 }
        if !list.hasMore, let total = list.totalCount { return max(1, total - list.rowCount + cursor + 1) }
        return nil
    }

    /// Whether to say `[stale]`: the list changed elsewhere and rows not loaded may have moved.
    /// Never when every row is loaded: those rows follow the changes (a 1-of-1 search result
    /// is not stale because someone renamed another user).
    var listLooksStale: Bool {
        guard let list = document.list, list.isStale else { return false }
        return list.hasMore || list.hasPrevious
    }

    /// 5000 as "5,000".
    static func counted(_ number: Int) -> String {
        let digits = String(number)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0, digit != "-" { out.append(",") }
            out.append(digit)
        }
        return out
    }

    func listLines() -> [Line] {
        let rows = size.rows
        let list = document.list
        var lines = [header(listTitle())] + bannerLines(list?.errorMessage)
        clampCursor()  // a message of several rows leaves fewer list rows: keep the cursor's on screen
        if list?.loading == .fullScreen && (list?.rowCount ?? 0) == 0 {
            let indent = String(repeating: " ", count: max(0, size.columns / 2 - 6))
            for index in 0..<listRows {
                let middle = index == listRows / 2
                lines.append(middle ? Line(indent + Self.spinnerFrames[spinner % 10] + " loading…") : Line(""))
            }
        } else {
            lines += listRowLines()
        }
        lines.append(listFooter())
        lines.append(statusLine())
        return Array(lines.prefix(rows)) + Array(repeating: Line(""), count: max(0, rows - lines.count))
    }

    /// "Users 312 of 5,000", then the search, whether rows come before the first one, `[stale]`.
    private func listTitle() -> String {
        let list = document.list
        var title = "Users"
        if let place = cursorPlace { title += " " + Self.counted(place) }
        if let total = list?.totalCount { title += (cursorPlace == nil ? " " : " of ") + Self.counted(total) }
        if let search = list?.search, !search.isEmpty { title += "  search: \(search)" }
        if list?.hasPrevious == true { title += "  ↑ more above" }
        if listLooksStale { title += "  [stale]" }
        return title
    }

    /// The rows on screen: the cursor, the name, ● when someone else has the user open, the
    /// email; the search's matches marked, a row just changed elsewhere highlighted.
    private func listRowLines() -> [Line] {
        let list = document.list
        let loaded = list?.rowCount ?? 0
        let nameWidth = max(10, min(40, (size.columns - 4) / 2))
        let emailWidth = max(0, size.columns - nameWidth - 6)
        let search = list?.search ?? ""
        let now = ContinuousClock.now
        var lines: [Line] = []
        for row in 0..<listRows {
            let index = scroll + row
            guard index < loaded, let user = list?.user(at: index) else {
                lines.append(Line(index == 0 ? "  (no users)" : "", .dim))
                continue
            }
            let name = DisplayWidth.pad(DisplayWidth.sanitized(user.name), to: nameWidth)
            let email = DisplayWidth.truncate(DisplayWidth.sanitized(user.email), to: emailWidth)
            let marker = list?.openElsewhere.contains(user.id) == true ? "● " : "  "  // open elsewhere
            let text = (index == cursor ? "▸ " : "  ") + name + marker + email
            var marks: [Range<Int>] = []
            if !search.isEmpty {
                if let match = Self.match(search, in: name) {
                    marks.append((2 + match.lowerBound)..<(2 + match.upperBound))
                }
                if let match = Self.match(search, in: email) {
                    let offset = 2 + name.count + 2
                    marks.append((offset + match.lowerBound)..<(offset + match.upperBound))
                }
            }
            let highlighted = highlights[user.id].map { now - $0 < .milliseconds(1500) } ?? false
            lines.append(Line(text, highlighted ? .reverse : index == cursor ? .bold : .plain, marks: marks))
        }
        return lines
    }

    /// The line above the status line: the remove question, the search being typed, what is
    /// on its way, or as many of the list's keys as fit.
    private func listFooter() -> Line {
        let list = document.list
        let spinning = Self.spinnerFrames[spinner % 10]
        if case .remove(_, let label) = prompt { return Line("  Remove \(label)? y/N", .error) }
        if let search = searching {
            return Line("/" + search + "▏  (Enter applies, Esc cancels, Ctrl-U clears)", .bold)
        }
        if goingToEnd { return Line("  \(spinning) going to the end…", .dim) }
        if list?.loading == .nextPage || list?.loading == .previousPage {
            return Line("  \(spinning) loading more…", .dim)
        }
        if list?.loading == .fullScreen { return Line("  \(spinning) loading…", .dim) }
        var hints = ["j/k move", "Enter open", "h history", "/ search", "a add", "d remove"]
        if let search = list?.search, !search.isEmpty { hints.append("Esc clears search") }
        hints += ["g/G first/last", "PgUp/PgDn", "r refresh", "q quit"]
        return hintBar(hints, help: "? help")
    }

    /// Where `search` first occurs in `text`, in characters, ignoring case and accents (as the
    /// daemon's search does), so the highlight marks what matched.
    static func match(_ search: String, in text: String) -> Range<Int>? {
        let characters = text.map(folded)
        let needle = search.map(folded)
        guard !needle.isEmpty, characters.count >= needle.count else { return nil }
        for start in 0...(characters.count - needle.count)
        where Array(characters[start..<(start + needle.count)]) == needle {
            return start..<(start + needle.count)
        }
        return nil
    }

    /// One character without case or accents ("É" → "e"); kept as is when folding would change
    /// the number of characters.
    static func folded(_ character: Character) -> Character {
        let folded = String(character).folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        if folded.count == 1 { return folded.first! }
        let lowered = String(character).lowercased()
        return Character(lowered.count == 1 ? lowered : String(character))
    }
}
