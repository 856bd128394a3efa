import Foundation
import UserListClient
import UserListWire

/// What the TUI draws: the list, the detail, the help overlay, and the hint bar.
extension TUI {
    static let spinnerFrames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

    /// Every key of each screen, for the help overlay (and, shortest first, the hint bar).
    static let listKeys: [(keys: String, does: String)] = [
        ("j k ↑ ↓", "move"), ("PgDn Space / PgUp", "a screen down / up (Ctrl-F / Ctrl-B)"),
        ("g Home / G End", "first user / last user of the whole list"),
        ("Enter", "open the user"), ("h", "history of the user under the cursor: who changed it, and undo"),
        ("a", "add a user: an empty user screen whose save creates the user"),
        ("d", "remove the user under the cursor (asks \"Remove NAME (EMAIL)? y/N\" first; only y removes)"),
        ("●", "someone else has this user open now"), ("/", "search (Enter applies, Esc cancels, Ctrl-U clears, Ctrl-W deletes a word)"),
        ("Esc", "clear the search, or dismiss a message"), ("x", "dismiss a message"),
        ("r", "refresh (reads the list again; clears [stale])"),
        ("[stale]", "changed elsewhere: rows not loaded yet may have moved; r reloads"),
        ("wheel / click", "scroll / select (off with --no-mouse)"), ("? F1", "this help"), ("q", "quit"),
        ("Ctrl-C", "quit, keeping the session: userctl in this terminal comes back to it"),
    ]

    static let detailKeys: [(keys: String, does: String)] = [
        ("any text", "edits the focused field (▏); every key that types goes into it, pastes too"),
        ("Tab Shift-Tab ↓ ↑", "next / previous field: name, email, avatar URL (an empty avatar URL: no avatar)"),
        ("Backspace", "delete a character"), ("Ctrl-W", "delete a word"), ("Ctrl-U", "clear the field"),
        ("Enter Ctrl-S", "save"), ("Esc", "dismiss a message, else back (asks first if there are unsaved changes)"),
        ("Ctrl-K / Ctrl-T", "a conflict (⚡: someone else saved this field too): keep mine / take theirs"),
        ("Ctrl-R", "the user was removed by someone else: create it again (and save); Esc discards"),
        ("d Ctrl-D", "remove this user, after asking (d only in an unchanged name; elsewhere it types)"),
        ("h Ctrl-O", "history: who changed this user, and undo (h only in an unchanged name; elsewhere it types)"),
        ("F1", "this help"), ("Ctrl-C", "quit, keeping unsaved changes: userctl in this terminal comes back to them"),
    ]

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

    func listLines() -> [Line] {
        let rows = size.rows
        let list = document.list
        let loaded = list?.rowCount ?? 0
        var title = "Users"
        if let place = cursorPlace { title += " " + Self.counted(place) }
        if let total = list?.totalCount { title += (cursorPlace == nil ? " " : " of ") + Self.counted(total) }
        if let search = list?.search, !search.isEmpty { title += "  search: \(search)" }
        if list?.hasPrevious == true { title += "  ↑ more above" }
        if listLooksStale { title += "  [stale]" }
        var lines = [header(title)] + bannerLines(list?.errorMessage)
        clampCursor()  // a message of several rows leaves fewer list rows: keep the cursor's on screen
        let nameWidth = max(10, min(40, (size.columns - 4) / 2))
        let emailWidth = max(0, size.columns - nameWidth - 6)
        let search = list?.search ?? ""
        if list?.loading == .fullScreen && loaded == 0 {
            for index in 0..<listRows {
                lines.append(index == listRows / 2
                             ? Line(String(repeating: " ", count: max(0, size.columns / 2 - 6)) + Self.spinnerFrames[spinner % 10] + " loading…")
                             : Line(""))
            }
        } else {
            let now = ContinuousClock.now
            for row in 0..<listRows {
                let index = scroll + row
                guard index < loaded, let user = list?.user(at: index) else { lines.append(Line(index == 0 ? "  (no users)" : "", .dim)); continue }
                let name = DisplayWidth.pad(DisplayWidth.sanitized(user.name), to: nameWidth)
                let email = DisplayWidth.truncate(DisplayWidth.sanitized(user.email), to: emailWidth)
                let marker = list?.openElsewhere.contains(user.id) == true ? "● " : "  "  // open elsewhere
                let text = (index == cursor ? "▸ " : "  ") + name + marker + email
                var marks: [Range<Int>] = []
                if !search.isEmpty {
                    if let match = Self.match(search, in: name) { marks.append((2 + match.lowerBound)..<(2 + match.upperBound)) }
                    if let match = Self.match(search, in: email) {
                        let offset = 2 + name.count + 2
                        marks.append((offset + match.lowerBound)..<(offset + match.upperBound))
                    }
                }
                let highlighted = highlights[user.id].map { now - $0 < .milliseconds(1500) } ?? false
                lines.append(Line(text, highlighted ? .reverse : index == cursor ? .bold : .plain, marks: marks))
            }
        }
        if case .remove(_, let label) = prompt {
            lines.append(Line("  Remove \(label)? y/N", .error))
        } else if let search = searching {
            lines.append(Line("/" + search + "▏  (Enter applies, Esc cancels, Ctrl-U clears)", .bold))
        } else if goingToEnd {
            lines.append(Line("  \(Self.spinnerFrames[spinner % 10]) going to the end…", .dim))
        } else if list?.loading == .nextPage || list?.loading == .previousPage {
            lines.append(Line("  \(Self.spinnerFrames[spinner % 10]) loading more…", .dim))
        } else if list?.loading == .fullScreen {
            lines.append(Line("  \(Self.spinnerFrames[spinner % 10]) loading…", .dim))
        } else {
            var hints = ["j/k move", "Enter open", "h history", "/ search", "a add", "d remove"]
            if let search = list?.search, !search.isEmpty { hints.append("Esc clears search") }
            hints += ["g/G first/last", "PgUp/PgDn", "r refresh", "q quit"]
            lines.append(hintBar(hints, help: "? help"))
        }
        lines.append(statusLine())
        return Array(lines.prefix(rows)) + Array(repeating: Line(""), count: max(0, rows - lines.count))
    }

    /// Where `search` first occurs in `text`, in characters, ignoring case and accents (as the
    /// daemon's search does), so the highlight marks what matched.
    static func match(_ search: String, in text: String) -> Range<Int>? {
        let characters = text.map(folded)
        let needle = search.map(folded)
        guard !needle.isEmpty, characters.count >= needle.count else { return nil }
        for start in 0...(characters.count - needle.count) where Array(characters[start..<(start + needle.count)]) == needle {
            return start..<(start + needle.count)
        }
        return nil
    }

    /// One character without case or accents ("É" → "e"); kept as is when folding would change
    /// the number of characters.
    static func folded(_ character: Character) -> Character {
        let folded = String(character).folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        return folded.count == 1 ? folded.first! : Character(String(character).lowercased().count == 1 ? String(character).lowercased() : String(character))
    }

    /// The user screen. On a small terminal the lines that matter most stay: the field being
    /// typed, whether it can be saved, a conflict or removal, and the questions (wrapped, never
    /// cut); the blank lines, version, id and the other fields give way first.
    func detailLines() -> [Line] {
        let detail = document.detail
        var title = detail?.isNew == true ? "New user" : "User" + (detail?.user.map { ": \($0.name)" } ?? "")
        if detail?.removal != nil, detail?.isNew == false { title += " (removed)" }
        if detail?.readOnly == true { title += "  · read-only" }
        var lines: [(line: Line, keep: Int)] = [(header(title), 8)]
        for line in bannerLines(detail?.errorMessage) { lines.append((line, line.text.isEmpty ? 0 : 7)) }
        if let detail, detail.user != nil || detail.isNew || detail.removal != nil {
            let editable = !detail.readOnly && (detail.removal == nil || detail.isNew)
            lines.append((Line(""), 0))
            for field in DetailField.allCases {
                let focused = editable && field == focusedField
                let text = fieldText(field)
                lines.append((Line(fieldLine(field, text, focused: focused), focused ? .bold : .plain), focused ? 9 : 4))
                if let note = fieldNote(field, in: detail) {
                    for wrapped in Self.wrapped(note.pieces, width: size.columns, indent: 12) {
                        lines.append((Line(wrapped, note.style), focused || note.style == .bold ? 9 : 4))
                    }
                }
            }
            if let user = detail.user {
                lines.append((Line("  ID:       " + user.id, .dim), 3))
                lines.append((Line("  Version:  \(user.version)", .dim), 2))
                if let changed = changedByLine(user) { lines.append((Line(changed, .dim), 5)) }
            }
            for text in presenceLines(detail.present) { lines.append((Line(text, .bold), 6)) }
            lines.append((Line(""), 0))
            let edited = hasUnsavedChanges
            if let removal = detail.removal, !detail.isNew {
                let who = removal.author.map(DisplayWidth.sanitized) ?? "someone"
                let pieces = detail.readOnly ? ["\(who) removed this user.", "Esc back"]
                    : ["\(who) removed this user.", "Ctrl-R create it again (and save)", "Esc discard"]
                for text in Self.wrapped(pieces, width: size.columns) { lines.append((Line(text, .error), 10)) }
            } else if detail.readOnly {
                lines.append((Line("  read-only: this session can look but not change users"), 9))
            } else if detail.isSaving {
                lines.append((Line("  \(Self.spinnerFrames[spinner % 10]) saving…"), 9))
            } else if !detail.conflicts.isEmpty {
                for text in Self.wrapped(["Someone else saved this user too: settle each ⚡ conflict first:", "Ctrl-K keep mine",
                                          "Ctrl-T take theirs"], width: size.columns) {
                    lines.append((Line(text, .bold), 9))
                }
            } else if edited, let problem = firstProblem(in: detail) {
                lines.append((Line("  ✕ cannot be saved: \(problem)", .bold), 9))
            } else if edited {
                lines.append((Line(detail.canSave == false && !draftUnsent && draftsInFlight == 0
                                   ? "  modified (the daemon cannot save it now)" : "  modified: Enter or Ctrl-S saves"), 9))
            }
            if prompt == .unsaved {
                lines.append((Line(""), 0))
                for text in Self.wrapped(Self.unsavedPrompt, width: size.columns) { lines.append((Line(text, .error), 10)) }
            } else if case .remove(_, let label) = prompt {
                lines.append((Line(""), 0))
                for text in Self.wrapped(["Remove \(label)? y/N"], width: size.columns) { lines.append((Line(text, .error), 10)) }
            }
        } else {
            lines.append((Line(""), 0))
            lines.append((Line("  \(Self.spinnerFrames[spinner % 10]) loading…"), 9))
        }
        let room = max(0, size.rows - 2)
        var kept = lines
        // Drop the least needed line (the lowest `keep`, the last of equals) until the rest fit.
        while kept.count > room, let lowest = kept.map(\.keep).min(),
              let index = kept.lastIndex(where: { $0.keep == lowest }) {
            kept.remove(at: index)
        }
        var out = kept.map(\.line)
        while out.count < room { out.append(Line("")) }
        let hints = detail?.readOnly == true ? ["read-only", "Esc back", "h history", "Ctrl-C quit"]
            : ["type to edit", "Tab next field", "Enter/Ctrl-S save", "Esc back", "Ctrl-U clear", "Ctrl-W word", "Ctrl-C quit"]
        out.append(hintBar(hints, help: "F1 help"))
        out.append(statusLine())
        return Array(out.prefix(size.rows))
    }

    /// Why the draft cannot be saved as typed: the name checked here as it is typed (the daemon
    /// has the same rules), the other fields as the daemon says once it has them.
    func firstProblem(in detail: DetailScreen) -> String? {
        for field in DetailField.allCases {
            if let problem = fieldProblem(field, in: detail) { return problem }
        }
        return nil
    }

    /// A changed field's validation message (for a new user, once anything is typed).
    func fieldProblem(_ field: DetailField, in detail: DetailScreen) -> String? {
        let changed = fieldText(field) != detail.stored(field)
        guard changed || (detail.isNew && hasUnsavedChanges) else { return nil }
        if field == .name { return NameRules.problem(fieldText(.name)) }
        return detail.fieldErrors[field]
    }

    /// The line under a field: its conflict (theirs beside mine, and the keys), its validation
    /// message, who changed it just now, or that it is modified.
    func fieldNote(_ field: DetailField, in detail: DetailScreen) -> (pieces: [String], style: Line.Look)? {
        if let conflict = detail.conflict(on: field) {
            let who = conflict.author.map(DisplayWidth.sanitized) ?? "someone"
            let theirs = conflict.theirs.isEmpty ? "(none)" : "\"" + DisplayWidth.sanitized(conflict.theirs) + "\""
            return (["⚡ \(who) saved \(theirs) (yours is above):", "Ctrl-K keep mine", "Ctrl-T take theirs"], .bold)
        }
        if !detail.readOnly, let problem = fieldProblem(field, in: detail) { return (["✕ " + problem], .bold) }
        if let change = detail.followed.first(where: { $0.field == field }) {
            let who = change.author.map(DisplayWidth.sanitized) ?? "someone"
            let recent = followedAt[field].map { ContinuousClock.now - $0 < .seconds(8) } ?? false
            return (["↻ \(who) changed the \(field.label)" + (recent ? " just now" : "")], recent ? .reverse : .dim)
        }
        if !detail.readOnly, detail.removal == nil, fieldText(field) != detail.stored(field), detail.user != nil {
            let was = detail.stored(field)
            return (["• modified (was " + (was.isEmpty ? "empty" : "\"" + DisplayWidth.sanitized(was) + "\"") + ")"], .dim)
        }
        return nil
    }

    /// "  bob is editing this user", "  alice also has this user open": who else has it open (the
    /// daemon's `present`: its sessions and those of daemons sharing its PostgreSQL database), by name, those editing first (their save may come first).
    func presenceLines(_ present: [(user: String, editing: Bool)]) -> [String] {
        let editing = present.filter(\.editing).map { DisplayWidth.sanitized($0.user) }
        let open = present.filter { !$0.editing }.map { DisplayWidth.sanitized($0.user) }
        var lines: [String] = []
        if !editing.isEmpty { lines.append("  " + Self.names(editing) + (editing.count == 1 ? " is" : " are") + " editing this user") }
        if !open.isEmpty { lines.append("  " + Self.names(open) + " also " + (open.count == 1 ? "has" : "have") + " this user open") }
        return lines
    }

    /// "alice", "alice and bob", "alice, bob and carol".
    static func names(_ names: [String]) -> String {
        names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " and " + names.last!
    }

    /// The question asked on Esc with unsaved changes, in pieces that wrap as units.
    static let unsavedPrompt = ["Unsaved changes.", "s save and go back", "d discard them", "k or Esc keep editing"]

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

    /// "  Name:     " and the field's text, with the cursor at its end when it has the focus. A
    /// text wider than the field scrolls with the cursor: its end shows, after "…", as a text
    /// field would. An empty avatar URL without the focus reads "-" (no avatar).
    func fieldLine(_ field: DetailField, _ value: String, focused: Bool) -> String {
        let label: String
        switch field {
        case .name: label = "  Name:     "
        case .email: label = "  Email:    "
        case .avatarURL: label = "  Avatar:   "
        }
        let text = DisplayWidth.sanitized(value)
        let cursor = focused ? "▏" : ""
        if !focused, field == .avatarURL, text.isEmpty { return label + "-" }
        let room = size.columns - DisplayWidth.of(label) - 1  // the cursor takes a column
        guard DisplayWidth.of(text) > room, room > 1 else { return label + text + cursor }
        if !focused { return label + DisplayWidth.truncate(text, to: room) }
        var tail = ""
        for character in text.reversed() {
            if DisplayWidth.of(String(character) + tail) > room - 1 { break }
            tail = String(character) + tail
        }
        return label + "…" + tail + cursor
    }

    /// Every key of the current screen, wrapped to the width; j/k, arrows, PgUp/PgDn scroll it
    /// (`helpScroll`), any other key closes it.
    func helpLines() -> [Line] {
        let keys = document.showsHistory ? Self.historyKeys : document.showsDetail ? Self.detailKeys : Self.listKeys
        let title = header("Help: " + (document.showsHistory ? "history" : document.showsDetail ? "user screen" : "user list"))
        let body = helpBody(keys)
        let room = max(1, size.rows - 3)  // the title, the footer, the status line
        helpScroll = max(0, min(helpScroll, body.count - room))
        var lines = [title] + body.dropFirst(helpScroll).prefix(room).map { Line($0) }
        while lines.count < size.rows - 2 { lines.append(Line("")) }
        let more = body.count > room
        let footer = more
            ? "  \(helpScroll + 1)–\(min(body.count, helpScroll + room)) of \(body.count) · j/k ↑↓ PgUp/PgDn scroll · other keys close"
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
