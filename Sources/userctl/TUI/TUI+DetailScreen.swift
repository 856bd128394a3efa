import Foundation
import UserListClient
import UserListWire

/// The user screen: its fields and what is said under each, who else has the user open, and
/// where the user stands; on a small terminal the lines that matter most stay.
extension TUI {
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

    /// The user screen. On a small terminal the lines that matter most stay: the field being
    /// typed, whether it can be saved, a conflict or removal, and the questions (wrapped, never
    /// cut); the blank lines, version, id and the other fields give way first.
    func detailLines() -> [Line] {
        let detail = document.detail
        var title = detail?.isNew == true ? "New user" : "User" + (detail?.user.map { ": \($0.name)" } ?? "")
        // A removed user created again (Ctrl-R) is that user, also while its create is refused.
        if let detail, detail.isNew, detail.userID == recreatedUserID { title = "User: " + fieldText(.name) }
        if detail?.removal != nil, detail?.isNew == false { title += " (removed)" }
        if detail?.readOnly == true { title += "  · read-only" }
        var lines: [RankedLine] = [(header(title), 8)]
        for line in bannerLines(detail?.errorMessage) { lines.append((line, line.text.isEmpty ? 0 : 7)) }
        if let detail, detail.user != nil || detail.isNew || detail.removal != nil {
            lines += detailFieldLines(detail)
            lines.append((Line(""), 0))
            lines += detailStateLines(detail)
            lines += detailQuestionLines()
        } else {
            lines.append((Line(""), 0))
            lines.append((Line("  \(Self.spinnerFrames[spinner % 10]) loading…"), 9))
        }
        var out = Self.fitted(lines, rows: max(0, size.rows - 2))
        let hints = detail?.readOnly == true ? ["read-only", "Esc back", "h history", "Ctrl-C quit"]
            : detail?.removal != nil ? ["Ctrl-R create it again", "Esc discard", "h history", "Ctrl-C quit"]
            : ["type to edit", "Tab next field", "Enter/Ctrl-S save", "Esc back", "Ctrl-U clear", "Ctrl-W word",
               "Ctrl-C quit"]
        out.append(hintBar(hints, help: "F1 help"))
        out.append(statusLine())
        return Array(out.prefix(size.rows))
    }

    /// A line of the user screen and how much it is needed when rows are short: the lowest
    /// `keep` gives way first.
    typealias RankedLine = (line: Line, keep: Int)

    /// `lines` in `rows` rows: the least needed line (the lowest `keep`, the last of equals)
    /// dropped until the rest fit, then empty rows to fill the screen.
    static func fitted(_ lines: [RankedLine], rows: Int) -> [Line] {
        var kept = lines
        while kept.count > rows, let lowest = kept.map(\.keep).min(),
              let index = kept.lastIndex(where: { $0.keep == lowest }) {
            kept.remove(at: index)
        }
        var out = kept.map(\.line)
        while out.count < rows { out.append(Line("")) }
        return out
    }

    /// The fields, each with its note under it (conflict, problem, who changed it, modified),
    /// then the id, version, who changed the user last, and who else has it open.
    private func detailFieldLines(_ detail: DetailScreen) -> [RankedLine] {
        let editable = !detail.readOnly && (detail.removal == nil || detail.isNew)
        var lines: [RankedLine] = [(Line(""), 0)]
        for field in DetailField.allCases {
            let focused = editable && field == focusedField
            let text = fieldText(field)
            lines.append((Line(fieldLine(field, text, focused: focused), focused ? .bold : .plain), focused ? 9 : 4))
            for note in fieldNotes(field, in: detail) {
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
        return lines
    }

    /// Where the user stands: removed by someone else, read-only, saving, in conflict, not
    /// savable as typed, or modified.
    private func detailStateLines(_ detail: DetailScreen) -> [RankedLine] {
        let edited = hasUnsavedChanges
        if let removal = detail.removal, !detail.isNew {
            // Your own removal (an undo, or `userctl remove` in another terminal) is yours.
            let who = removal.author.map { $0 == DaemonLocator.loginName ? "You" : DisplayWidth.sanitized($0) }
                ?? "Someone"
            let pieces = detail.readOnly ? ["\(who) removed this user.", "Esc back"]
                : ["\(who) removed this user.", "Ctrl-R create it again (and save)", "Esc discard"]
            return Self.wrapped(pieces, width: size.columns).map { (Line($0, .error), 10) }
        }
        if detail.readOnly { return [(Line("  read-only: this session can look but not change users"), 9)] }
        if detail.isSaving { return [(Line("  \(Self.spinnerFrames[spinner % 10]) saving…"), 9)] }
        if !detail.conflicts.isEmpty {
            let pieces = ["Settle each ⚡ conflict before saving:", "Ctrl-K keep mine", "Ctrl-T take theirs"]
            return Self.wrapped(pieces, width: size.columns).map { (Line($0, .bold), 9) }
        }
        if edited, let problem = firstProblem(in: detail) {
            return [(Line("  ✕ cannot be saved: \(problem)", .bold), 9)]
        }
        guard edited else { return [] }
        let stuck = detail.canSave == false && !draftUnsent && draftsInFlight == 0
        return [(Line(stuck ? "  modified (the daemon cannot save it now)" : "  modified: Enter or Ctrl-S saves"), 9)]
    }

    /// The question on screen, whole (wrapped, never cut): unsaved changes, or removing the user.
    private func detailQuestionLines() -> [RankedLine] {
        let pieces: [String]
        if prompt == .unsaved {
            pieces = Self.unsavedPrompt
        } else if case .remove(_, let label) = prompt {
            pieces = ["Remove \(label)? y/N"]
        } else {
            return []
        }
        return [(Line(""), 0)] + Self.wrapped(pieces, width: size.columns).map { (Line($0, .error), 10) }
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

    /// The lines under a field: its conflict (theirs beside mine, and the keys); or its validation
    /// message, and that it is modified (the person sees it differs from the stored value); or
    /// who changed it just now; or that it is modified.
    func fieldNotes(_ field: DetailField, in detail: DetailScreen) -> [(pieces: [String], style: Line.Look)] {
        if let conflict = detail.conflict(on: field) {
            let who = conflict.author.map(DisplayWidth.sanitized) ?? "someone"
            let theirs = conflict.theirs.isEmpty ? "(none)" : "\"" + DisplayWidth.sanitized(conflict.theirs) + "\""
            return [(["⚡ \(who) saved \(theirs) (yours is above):", "Ctrl-K keep mine", "Ctrl-T take theirs"], .bold)]
        }
        let modified = modifiedNote(field, in: detail).map { [$0] } ?? []
        if !detail.readOnly, let problem = fieldProblem(field, in: detail) {
            return [(["✕ " + problem], .bold)] + modified
        }
        if let change = detail.followed.first(where: { $0.field == field }) {
            let who = change.author.map(DisplayWidth.sanitized) ?? "someone"
            let recent = followedAt[field].map { ContinuousClock.now - $0 < .seconds(8) } ?? false
            return [(["↻ \(who) changed the \(field.label)" + (recent ? " just now" : "")], recent ? .reverse : .dim)]
        }
        return modified
    }

    /// "• modified (was …)" under a field whose text differs from the stored user's.
    func modifiedNote(_ field: DetailField, in detail: DetailScreen) -> (pieces: [String], style: Line.Look)? {
        guard !detail.readOnly, detail.removal == nil, fieldText(field) != detail.stored(field), detail.user != nil
        else { return nil }
        let was = detail.stored(field)
        let shown = was.isEmpty ? "empty" : "\"" + DisplayWidth.sanitized(was) + "\""
        return (["• modified (was " + shown + ")"], .dim)
    }

    /// "  bob is editing this user", "  alice also has this user open": who else has it open (the
    /// daemon's `present`: its sessions and those of daemons sharing its PostgreSQL database), by
    /// name, those editing first (their save may come first).
    func presenceLines(_ present: [(user: String, editing: Bool)]) -> [String] {
        let editing = present.filter(\.editing).map { DisplayWidth.sanitized($0.user) }
        let open = present.filter { !$0.editing }.map { DisplayWidth.sanitized($0.user) }
        var lines: [String] = []
        if !editing.isEmpty {
            lines.append("  " + Self.names(editing) + (editing.count == 1 ? " is" : " are") + " editing this user")
        }
        if !open.isEmpty {
            lines.append("  " + Self.names(open) + " also " + (open.count == 1 ? "has" : "have") + " this user open")
        }
        return lines
    }

    /// "alice", "alice and bob", "alice, bob and carol".
    static func names(_ names: [String]) -> String {
        names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " and " + names.last!
    }

    /// The question asked on Esc with unsaved changes, in pieces that wrap as units.
    static let unsavedPrompt = ["Unsaved changes.", "s save and go back", "d discard them", "k or Esc keep editing"]

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
}
