import Foundation

/// `userctl history`'s `--kind`, `--via` and `--date`, in a person's words, to the wire's.
enum HistoryFilters {
    static let kinds = ["added", "saved", "removed", "imported"]

    static func kind(_ text: String) throws -> String {
        let kind = text.lowercased()
        guard kinds.contains(kind) else {
            let known = kinds.joined(separator: ", ")
            throw UsageError(message: "--kind takes \(known), not '\(text)'", command: "history")
        }
        return kind
    }

    /// The sources `history` prints (TUI, userctl, import, another daemon) and the wire's names.
    static let sources: [String: String] = [
        "tui": "intent", "intent": "intent", "userctl": "command", "command": "command", "import": "import",
        "another-daemon": "daemon", "another daemon": "daemon", "daemon": "daemon",
    ]

    static func via(_ text: String) throws -> String {
        guard let via = sources[text.lowercased()] else {
            let undo = text.lowercased().hasPrefix("revert") || text.lowercased().hasPrefix("undo")
                ? " (an undo is listed under where it was made, and says \"undoes #N\")" : ""
            throw UsageError(message: "--via takes tui, userctl, import or another-daemon, not '\(text)'" + undo,
                             command: "history")
        }
        return via
    }

    /// How WHEN is shown: "3 min ago" (the default), RFC 3339 in UTC, or the local time.
    enum Dates {
        case relative, iso, local

        func format(_ text: String?, now: Date) -> String {
            guard let text, let at = HistoryFilters.parse(text) else { return text ?? "-" }
            switch self {
            case .relative: return RelativeTime.ago(now.timeIntervalSince(at))
            case .iso: return at.formatted(Date.ISO8601FormatStyle(timeZone: TimeZone(identifier: "UTC")!))
            case .local:
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = .current
                formatter.dateFormat = "yyyy-MM-dd HH:mm:ss xxx"
                return formatter.string(from: at)
            }
        }
    }

    static func dates(_ text: String?) throws -> Dates {
        switch text?.lowercased() {
        case nil, "relative": .relative
        case "iso", "iso8601", "rfc3339": .iso
        case "local": .local
        case let other?:
            throw UsageError(message: "--date takes relative, iso or local, not '\(other)'", command: "history")
        }
    }

    static func parse(_ text: String) -> Date? {
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
            ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}
