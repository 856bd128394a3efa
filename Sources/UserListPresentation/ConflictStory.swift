import Foundation
import UserListDomain

/// What happened to a user since the version a one-shot write expected, in a person's words,
/// from the history: "alice changed the name to “Ada King” just now". A `set`, `rename` or undo
/// that loses its version check says who saved first, when and what, instead of "someone".
public enum ConflictStory {
    /// The changes in `entries` (any order) after `version`, oldest first; nil when none is kept.
    public static func since(_ version: Int, in entries: [HistoryEntry], now: Date = Date()) -> String? {
        let ordered = entries.sorted { $0.id < $1.id }
        // Everything after the last entry that left the user at `version` (or below).
        let start = ordered.lastIndex { ($0.versionAfter ?? Int.max) <= version }.map { $0 + 1 } ?? 0
        let newer = Array(ordered[start...])
        guard !newer.isEmpty else { return nil }
        let told = newer.suffix(3).map { describe($0, now: now) }
        let more = newer.count > 3 ? " (and \(newer.count - 3) earlier changes)" : ""
        return told.joined(separator: "; ") + more + "."
    }

    public static func describe(_ entry: HistoryEntry, now: Date) -> String {
        let who = entry.author.personName
        let when = ago(now.timeIntervalSince(entry.at))
        switch entry.kind {
        case .removed: return "\(who) removed this user \(when)"
        case .added: return "\(who) added this user \(when)"
        case .imported: return "\(who) imported over this user \(when)"
        case .saved:
            guard let before = entry.before, let after = entry.after else { return "\(who) saved this user \(when)" }
            let changes = UserField.allCases.filter { before[$0] != after[$0] }.map { field -> String in
                after[field].isEmpty
                    ? "removed the \(field.label)" : "changed the \(field.label) to “\(after[field])”"
            }
            let what = changes.isEmpty ? "saved this user" : changes.joined(separator: " and ")
            return "\(who) \(what) \(when)"
        }
    }

    /// "just now", "5 min ago", "2 h ago", "4 days ago": as the TUI and `userctl history` say it.
    public static func ago(_ seconds: TimeInterval) -> String {
        let whole = max(0, Int(seconds))
        switch whole {
        case ..<45: return "just now"
        case ..<60: return "1 min ago"
        case ..<3_600: return "\(whole / 60) min ago"
        case ..<86_400: return "\(whole / 3_600) h ago"
        default: return "\(whole / 86_400) days ago"
        }
    }
}
