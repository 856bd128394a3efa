import Foundation
import Glibc
import UserListClient
import UserListWire

/// `userctl history` and `userctl revert`: who changed what, newest first (like `git log`), and
/// undo of one entry (like `git revert`).
enum HistoryCommands {
    static let defaultLimit = 50

    static func history(_ context: CommandContext) async throws {
        var args: [String: JSONValue] = [:]
        if let text = context.invocation.positionals.first {
            args["user_id"] = .string(try await UserIDArgument.resolve(text, context.client))
        }
        let values = context.invocation.values
        if let by = values["by"] { args["by_uid"] = .int(Int64(try uid(of: by))) }
        if let since = values["since"] { args["since"] = .string(try time(since)) }
        if let kind = values["kind"] { args["kind"] = .string(try HistoryFilters.kind(kind)) }
        if let via = values["via"] { args["via"] = .string(try HistoryFilters.via(via)) }
        let dates = try HistoryFilters.dates(values["date"])
        var wanted = defaultLimit
        if let text = values["limit"] {
            guard let limit = Int(text), limit > 0 else {
                throw UsageError(message: "--limit needs a positive number, not '\(text)'", command: "history")
            }
            wanted = limit
        }
        var entries: [JSONValue] = []
        var before: Int64?
        var more = 0
        repeat {
            var page = args
            page["limit"] = .int(Int64(min(1_000, wanted - entries.count)))
            if let before { page["before"] = .int(before) }
            // The last page asks how many more match, for the "N more" line.
            if wanted - entries.count <= 1_000 { page["count"] = .bool(true) }
            let result = try await send(context, page)
            entries += result?["entries"]?.arrayValue ?? []
            before = result?["next"]?.int64Value
            more = Int(result?["more"]?.int64Value ?? 0)
        } while before != nil && entries.count < wanted
        if context.json {
            print(JSONValue.array(entries).description)
            return
        }
        if entries.isEmpty {
            print("no changes recorded" + (args.isEmpty ? "" : " that match"))
            return
        }
        let now = Date()
        let rows = entries.map { entry -> [String] in
            [Table.cell(entry["entry"]), dates.format(entry["at"]?.stringValue, now: now),
             who(entry), source(entry), Table.cell(entry["kind"]),
             String((entry["user_id"]?.stringValue ?? "-").prefix(8)), change(entry)]
        }
        print(Table(headers: ["ENTRY", "WHEN", "WHO", "SOURCE", "KIND", "USER", "CHANGE"], rows: rows, numeric: [0])
            .render(style: context.style))
        if before != nil && more > 0 {
            print("\(more) more: --limit \(entries.count + more) shows them")
        }
    }

    private static func send(_ context: CommandContext, _ args: [String: JSONValue]) async throws -> JSONValue? {
        do {
            return try await context.client.send(screen: "session", action: "history", args: args)
        } catch let error as ClientError where error.serverCode == .unknownAction {
            throw CommandFailure(.unavailable, "this userlistd keeps no history; upgrade it")
        }
    }

    /// Where a change came from, as a person says it and `--via` takes it: TUI (a screen),
    /// userctl (a one-shot command), import, another daemon (on the same store). An undo is
    /// where it was made (its WHAT says "undoes #N"): the daemon records no source "revert".
    static func source(_ entry: JSONValue) -> String {
        switch entry["via"]?.stringValue {
        case "intent": return "TUI"
        case "command": return "userctl"
        case "import": return "import"
        case "daemon": return "another daemon"
        case let other?: return DisplayWidth.sanitized(other)
        case nil: return "-"
        }
    }

    /// Who made an entry: the login name, else the uid (no name for it on the daemon's host),
    /// else "unknown" (a write the daemon did not make, e.g. another program on the store).
    static func who(_ entry: JSONValue) -> String {
        if let name = entry["user"]?.stringValue { return DisplayWidth.sanitized(name) }
        if let uid = entry["uid"]?.int64Value { return "uid \(uid)" }
        return "unknown"
    }

    static func revert(_ context: CommandContext) async throws {
        let text = context.invocation.positionals[0]
        guard let entry = Int64(text), entry > 0 else {
            // A malformed argument, as a malformed --limit is: a usage error (64), not data (65).
            throw UsageError(message: "'\(text)' is not a history entry: "
                             + "entries are the numbers 'userctl history' prints", command: "revert")
        }
        var args: [String: JSONValue] = ["entry": .int(entry)]
        if context.invocation.flags.contains("force-skip-changed") { args["skip_changed"] = .bool(true) }
        let result: JSONValue?
        do {
            result = try await context.client.send(screen: "session", action: "revert", args: args)
        } catch let error as ClientError {
            // Undone already (reverted twice): the daemon's words say it all.
            if error.serverCode == .validation, error.message.hasPrefix("Entry \(entry) is already undone") {
                throw CommandFailure(error, "e" + error.message.dropFirst())
            }
            throw CommandFailure(error, "cannot revert entry \(entry): \(error.message)")
        }
        if context.json {
            print((result ?? .null).description)
        } else if let removed = result?["removed"]?.int64Value, let restored = result?["restored"]?.int64Value {
            print(undone(entry, result, removed: removed, restored: restored))
        } else if let user = UserRow(result?["user"]) {
            let name = DisplayWidth.sanitized(user.name)
            print("reverted entry \(entry): \(user.id) is \"\(name)\" again (version \(user.version))")
        } else {
            print("reverted entry \(entry): the user it added is removed")
        }
    }

    /// "undid import #12 as entry #15: 2 users removed, 1 restored; left as they are: …".
    private static func undone(_ entry: Int64, _ result: JSONValue?, removed: Int64, restored: Int64) -> String {
        let skipped = result?["skipped"]?.arrayValue?.compactMap(\.stringValue) ?? []
        // By name, who changed each and when, from a daemon that tells them; else by id.
        let told = (result?["skipped_told"]?.arrayValue).map { values in
            values.compactMap(\.stringValue).map(DisplayWidth.sanitized)
        }
        let shown = told ?? Array(skipped.prefix(10))
        let own = result?["undo_entry"]?.int64Value.map { " as entry \($0)" } ?? ""
        var line = "undid import \(entry)\(own): \(Plural.users(Int(removed))) removed, \(restored) restored"
        if !skipped.isEmpty {
            line += "; left as they are (changed since): " + shown.joined(separator: "; ")
                + (skipped.count > shown.count ? " and \(skipped.count - shown.count) more" : "")
        }
        return line
    }

    /// "alice" → alice's uid; a number is taken as a uid.
    static func uid(of user: String) throws -> UInt32 {
        if let uid = UInt32(user) { return uid }
        guard let entry = getpwnam(user) else {
            throw CommandFailure(.dataError, "no user '\(user)' on this system (give a uid instead)")
        }
        return entry.pointee.pw_uid
    }

    /// RFC 3339 as given, a date (midnight UTC), or a span back from now: 30m, 2h, 7d.
    static func time(_ text: String) throws -> String {
        let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        if (try? Date.ISO8601FormatStyle().parse(text)) != nil || (try? format.parse(text)) != nil { return text }
        if (try? Date.ISO8601FormatStyle().year().month().day().parse(text)) != nil { return text + "T00:00:00Z" }
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400, "w": 604_800]
        if let unit = text.last.flatMap({ units[$0] }), let count = Double(text.dropLast()), count >= 0 {
            return Date().addingTimeInterval(-count * unit).formatted(format)
        }
        throw UsageError(message: "--since needs a time: 2026-12-01T09:00:00Z, 2026-12-01, or a span back from now "
                         + "(30m, 2h, 7d), not '\(text)'", command: "history")
    }

    /// "3 min ago", from the entry's RFC 3339 time.
    static func ago(_ text: String?, now: Date) -> String {
        guard let text, let at = (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
                ?? (try? Date.ISO8601FormatStyle().parse(text)) else { return text ?? "-" }
        return RelativeTime.ago(now.timeIntervalSince(at))
    }

    /// What changed, in a few words: the fields that differ, before → after; an import by its
    /// source and counts; a user's part of an import by the import's number.
    static func change(_ entry: JSONValue) -> String {
        if let batch = entry["import"]?.objectValue { return imported(entry, batch) }
        let number = entry["entry"]?.int64Value ?? 0
        let what = fields(entry)
        if entry["part_of_import"] == .bool(true) {
            // One note: the undo's own entry already says which import it undid.
            guard let undone = entry["reverts"]?.int64Value else { return what + " (imported in #\(number))" }
            return what + " (in #\(number), the undo of import #\(undone))"
        }
        guard let undone = entry["reverts"]?.int64Value else { return what }
        return what + " (undoes #\(undone))"
    }

    /// "imported users.json: 3 added, 2 updated", or for its undo "undid import #12 (users.json): 2
    /// removed, 1 restored".
    private static func imported(_ entry: JSONValue, _ batch: [String: JSONValue]) -> String {
        let source = batch["source"]?.stringValue.map(DisplayWidth.sanitized)
        let count = { (key: String) in Int(batch[key]?.int64Value ?? 0) }
        if let undone = entry["reverts"]?.int64Value {
            return "undid import #\(undone)" + (source.map { " (\($0))" } ?? "")
                + ": \(count("removed")) removed, \(count("updated")) restored"
        }
        return "imported " + (source ?? "users") + ": \(count("added")) added, \(count("updated")) updated"
    }

    private static func fields(_ entry: JSONValue) -> String {
        let before = entry["before"]?.objectValue, after = entry["after"]?.objectValue
        func field(_ object: [String: JSONValue]?, _ key: String) -> String {
            object?[key]?.stringValue.map { "\"\(DisplayWidth.sanitized($0))\"" } ?? "-"
        }
        switch (before, after) {
        case (nil, let after?): return "added " + field(after, "name")
        case (let before?, nil): return "removed " + field(before, "name")
        case (let before?, let after?):
            let changed = ["name", "email", "avatar_url"].filter { before[$0] != after[$0] }
            if changed.isEmpty { return "saved unchanged" }
            // As a person says the field ("avatar URL"), not its key.
            return changed.map { key in
                "\(key == "avatar_url" ? "avatar URL" : key) \(field(before, key)) → \(field(after, key))"
            }.joined(separator: ", ")
        case (nil, nil): return "-"
        }
    }
}

/// "just now", "3 min ago", "2 h ago", "5 days ago": how the TUI and `history` say when.
enum RelativeTime {
    static func ago(_ seconds: TimeInterval) -> String {
        switch max(0, seconds) {
        case ..<45: "just now"
        case ..<3_600: "\(Int((seconds / 60).rounded(.up)) ) min ago"
        case ..<86_400: "\(Int(seconds / 3_600)) h ago"
        default: "\(Int(seconds / 86_400)) day\(Int(seconds / 86_400) == 1 ? "" : "s") ago"
        }
    }
}
