import Foundation
import UserListDomain
import UserListWire

/// Intents of the `history` screen (a user's history, pushed from their detail screen).
enum HistoryIntent: Equatable {
    case onAppear
    case refresh
    case didDisplayRow(index: Int)
    /// Undo an entry: a write (refused on a read-only session).
    case revert(entry: Int64)
    case dismissError
    case back

    init(_ action: String, _ args: IntentArguments) throws(IntentError) {
        switch action {
        case "on_appear": self = .onAppear
        case "refresh": self = .refresh
        case "did_display_row": self = .didDisplayRow(index: try args.int("index"))
        case "revert": self = .revert(entry: Int64(try args.int("entry")))
        case "dismiss_error": self = .dismissError
        case "back": self = .back
        default: throw IntentError(.unknownAction, "The history screen has no action '\(action)'.")
        }
    }
}

/// The arguments of the session's `history` (`userctl history`): an optional `user_id`, `by_uid`
/// (an actor), `since` (RFC 3339), `before` (an entry number: the page below it), `limit`
/// (1 to 1,000, 50 when absent), `kind`, `via` and `count`. Newest first.
struct HistoryRequest: Equatable {
    var userID: UUID?
    var actorUID: UInt32?
    var since: Date?
    var before: Int64?
    var limit: Int
    /// `kind` (added, saved, removed, imported) and `via` (intent, command, import, daemon).
    var kind: HistoryKind?
    var via: ChangeVia?
    /// `count`: the reply says how many entries match below the page (`more`).
    var count = false

    init(_ args: IntentArguments) throws(IntentError) {
        userID = try args.optionalString("user_id") == nil ? nil : try args.uuid("user_id")
        if let uid = try args.optionalInt("by_uid") {
            guard let valid = UInt32(exactly: uid) else {
                throw IntentError(.invalidArgs, "'by_uid' must be a uid (0 to 4294967295).")
            }
            actorUID = valid
        }
        if let text = try args.optionalString("since") {
            guard let date = Self.parseTime(text) else {
                throw IntentError(.invalidArgs,
                                  "'since' must be an RFC 3339 time such as 2026-12-02T13:00:00Z (got \"\(text)\").")
            }
            since = date
        }
        before = try args.optionalInt("before").map(Int64.init)
        limit = try args.optionalInt("limit") ?? FetchHistoryUseCase.defaultPageSize
        guard (1...1_000).contains(limit) else {
            throw IntentError(.invalidArgs, "'limit' must be 1 to 1000 entries (got \(limit)).")
        }
        if let text = try args.optionalString("kind") {
            guard let kind = HistoryKind(rawValue: text) else {
                let kinds = HistoryKind.allCases.map(\.rawValue).joined(separator: ", ")
                throw IntentError(.invalidArgs, "'kind' must be one of \(kinds) (got \"\(text)\").")
            }
            self.kind = kind
        }
        if let text = try args.optionalString("via") {
            guard let via = ChangeVia(rawValue: text) else {
                let ways = ChangeVia.allCases.map(\.rawValue).joined(separator: ", ")
                throw IntentError(.invalidArgs, "'via' must be one of \(ways) (got \"\(text)\").")
            }
            self.via = via
        }
        count = try Self.flag(args, "count")
    }

    /// An optional boolean argument (false when absent).
    static func flag(_ args: IntentArguments, _ name: String) throws(IntentError) -> Bool {
        guard let value = args.values[name], value != .null else { return false }
        guard let flag = value.boolValue else { throw IntentError(.invalidArgs, "'\(name)' must be true or false.") }
        return flag
    }

    static func parseTime(_ text: String) -> Date? {
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
            ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}
