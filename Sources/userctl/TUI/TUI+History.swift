import Foundation
import UserListClient
import UserListWire

/// The history screen (`h` or Ctrl-O on a user's screen): who changed the user, newest first, and undo
/// of the selected entry. And the user screen's "changed by alice 3 min ago".
extension TUI {
    static let historyKeys: [(keys: String, does: String)] = [
        ("j k ↑ ↓", "move"),
        ("u", "undo the selected change (a conflict if the user changed since); asks y/N first when the undo "
            + "removes the user or creates it again"),
        ("r", "read the history again"), ("Esc q ←", "back to the user"), ("F1", "this help"),
    ]

    func handleHistory(_ key: Key) -> Bool {
        let count = document.history?.entries.count ?? 0
        switch key {
        case .character("j"), .down:
            historyCursor = min(historyCursor + 1, max(0, count - 1))
            if historyCursor >= count - 3, document.history?.hasMore == true {
                send("history", "did_display_row", ["index": .int(Int64(historyCursor))])
            }
        case .character("k"), .up: historyCursor = max(0, historyCursor - 1)
        case .character("r"): send("history", "refresh")
        case .character("u"):
            guard let selected = document.history?.entries[safe: historyCursor],
                  let entry = selected["entry"]?.int64Value else { return true }
            if sessionIsReadOnly || document.detail?.readOnly == true { return refuseReadOnly("undo changes") }
            if let question = Self.undoQuestion(selected) {
                prompt = .undo(entry: entry, question: question)
            } else {
                send("history", "revert", ["entry": .int(entry)])
            }
        case .character("x"): dismissBanner(screen: "history")
        case .escape:
            if banner != nil || document.history?.errorMessage != nil {
                dismissBanner(screen: "history")
            } else {
                send("history", "back")
            }
        case .character("q"), .left: send("history", "back")
        default: break
        }
        return true
    }

    func historyLines() -> [Line] {
        let history = document.history
        let name = document.detail?.user?.name ?? ""
        let message = bannerLines(history?.errorMessage)
        var lines = [header("History" + (name.isEmpty ? "" : ": \(name)"))] + message
        let entries = history?.entries ?? []
        if entries.isEmpty {
            let reading = "  \(Self.spinnerFrames[spinner % 10]) reading…"
            lines.append(Line(history?.loading == "none" ? "  no changes recorded" : reading))
        }
        let now = Date()
        let rows = max(1, size.rows - 3 - message.count - (entries.isEmpty ? 1 : 0))
        let first = max(0, min(historyCursor - rows + 1, entries.count - rows))
        let numberWidth = String(entries.first?["entry"]?.int64Value ?? 0).count  // newest first: the widest
        for (index, entry) in entries.enumerated().dropFirst(first).prefix(rows) {
            let number = String(entry["entry"]?.int64Value ?? 0)
            let text = "  " + String(repeating: " ", count: max(0, numberWidth - number.count)) + "#\(number)  "
                + "\(HistoryCommands.ago(entry["at"]?.stringValue, now: now))  "
                + "\(HistoryCommands.who(entry)) (\(HistoryCommands.source(entry)))  \(HistoryCommands.change(entry))"
                + (history?.reverting == entry["entry"]?.int64Value ? "  undoing…" : "")
            lines.append(Line(text, index == historyCursor ? .reverse : .plain))
        }
        while lines.count < size.rows - 2 { lines.append(Line("")) }
        // Above the status line, as on the other screens; the short words (help has the long).
        if case .undo(_, let question) = prompt {
            lines.append(Line("  \(question) y/N", .error))
        } else {
            lines.append(hintBar(["u undo", "Esc back", "r reload", "j k ↑ ↓ move"], help: "F1 help"))
        }
        lines.append(statusLine())
        return lines
    }

    /// What undoing `entry` would do, asked before it is done, when that is more than putting
    /// fields back: "Undo #12: this removes Ada Lovelace (ada@example.com)." for an entry that
    /// added the user, "Undo #14: this creates Ada Lovelace again." for one that removed it.
    /// `nil` for the others (and for imports, whose undo is their own).
    static func undoQuestion(_ entry: JSONValue) -> String? {
        guard entry["import"] == nil, let number = entry["entry"]?.int64Value else { return nil }
        let before = entry["before"]?.objectValue, after = entry["after"]?.objectValue
        func text(_ object: [String: JSONValue], _ key: String) -> String {
            DisplayWidth.sanitized(object[key]?.stringValue ?? "")
        }
        switch (before, after) {
        case (nil, let after?):
            let email = text(after, "email")
            return "Undo #\(number): this removes \(text(after, "name"))" + (email.isEmpty ? "." : " (\(email)).")
        case (let before?, nil):
            return "Undo #\(number): this creates \(text(before, "name")) again."
        default: return nil
        }
    }

    /// "  changed by alice 3 min ago", for the user on screen at its version: asked for once per
    /// version (the session's `history`, one entry), shown when known.
    func changedByLine(_ user: UserRow) -> String? {
        guard let known = lastChange, known.userID == user.id, known.version == user.version else {
            if lastChange?.userID != user.id || lastChange?.version != user.version {
                lastChange = (user.id, user.version, nil)
                let feed = self.feed
                let args: [String: JSONValue] = ["user_id": .string(user.id), "limit": 1]
                client.enqueue(screen: "session", action: "history", args: args) { result in
                    guard case .success(let value) = result else { return }
                    let newest = value?["entries"]?.arrayValue?.first
                    feed.yield(.lastChange(userID: user.id, version: user.version, entry: newest))
                }
            }
            return nil
        }
        guard let entry = known.entry else { return nil }
        let who = entry["user"]?.stringValue ?? entry["uid"]?.int64Value.map { "uid \($0)" } ?? "someone"
        let verb = entry["kind"] == "added" ? "added" : "changed"
        return "  \(verb) by \(who) \(HistoryCommands.ago(entry["at"]?.stringValue, now: Date()))"
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
