import UserListClient
import UserListWire

/// What `userctl watch` says when the daemon sends `session` `reloaded`: the users changed as a
/// whole (an import, or changes the daemon could not follow one by one) rather than user by user.
/// The event does not say who or how many, so userctl asks the history for the entries since the
/// newest it knew of, and reports the imports among them (one entry each, with its counts, on
/// whichever daemon sharing the store made it), one line per person who imported: "alice
/// imported 20,000 users (#31)", and each undo of one: "bob undid import #31: 20,000 removed,
/// 0 restored (#35)". Entries of other kinds were already reported by their own `changed` events.
final class WatchImports {
    /// One person's part of an import.
    struct Import: Equatable {
        var user: String?
        var uid: Int?
        var count: Int
        var firstEntry: Int
        var lastEntry: Int
        /// For the undo of an import: the import it undid, and the users it removed and put back.
        var undid: Undo?

        struct Undo: Equatable {
            var entry: Int
            var removed: Int
            var restored: Int
        }

        /// "alice", "uid 1001", or "the daemon" (its own sample data, no peer).
        var who: String {
            if let user { return DisplayWidth.sanitized(user) }
            return uid.map { "uid \($0)" } ?? "the daemon"
        }

        var entries: String { firstEntry == lastEntry ? "#\(firstEntry)" : "#\(firstEntry)-#\(lastEntry)" }

        var text: String {
            if let undid {
                return "\(who) undid import #\(undid.entry): \(Progress.grouped(undid.removed)) removed, "
                    + "\(Progress.grouped(undid.restored)) restored (\(entries))"
            }
            return "\(who) imported \(count == 1 ? "1 user" : Progress.grouped(count) + " users") (\(entries))"
        }

        var json: JSONValue {
            var fields: [String: JSONValue] = [
                "user": user.map(JSONValue.string) ?? .null, "uid": uid.map { .int(Int64($0)) } ?? .null,
                "count": .int(Int64(count)), "first_entry": .int(Int64(firstEntry)),
                "last_entry": .int(Int64(lastEntry))]
            if let undid {
                fields["undid"] = .int(Int64(undid.entry))
                fields["removed"] = .int(Int64(undid.removed))
                fields["restored"] = .int(Int64(undid.restored))
            }
            return .object(fields)
        }
    }

    /// History pages read for one reload at most (1,000 entries each): an import of more users
    /// than that is reported with the count read so far, "or more".
    static let maximumPages = 100

    private let client: UserListClient
    /// The newest history entry already accounted for (nil: the store keeps no history).
    private var newestSeen: Int?

    init(client: UserListClient) {
        self.client = client
    }

    /// Reads where the history stands, so that imports before the watch began are not reported.
    func start() async {
        guard let first = try? await page(before: nil, limit: 1) else { return }  // no history kept
        newestSeen = first.entries.first?["entry"]?.int64Value.map(Int.init) ?? 0
    }

    /// The imports since the last call, oldest first; empty when the history has none (a reload
    /// for a gap in the change log, or a store that keeps no history). `complete` is false when
    /// more entries were left unread than `maximumPages` allow.
    func since() async -> (imports: [Import], complete: Bool) {
        guard let seen = newestSeen else { return ([], true) }
        var found: [Import] = []
        var before: Int?
        var newest = seen
        for _ in 0..<Self.maximumPages {
            guard let (entries, next) = try? await page(before: before, limit: 1_000) else { break }
            for entry in entries {
                guard let number = entry["entry"]?.int64Value.map(Int.init), number > seen else {
                    newestSeen = newest
                    return (Self.grouped(found), true)
                }
                newest = max(newest, number)
                if let item = Self.importItem(entry, number: number) { found.append(item) }
            }
            guard let next else {
                newestSeen = newest
                return (Self.grouped(found), true)
            }
            before = next
        }
        newestSeen = newest
        return (Self.grouped(found), false)
    }

    /// The import (or undo of one) `entry` stands for, nil for any other entry. Its kind says
    /// so: its source reads "another daemon" where another daemon made it. An older daemon's
    /// entries are one per user, `via` an import.
    static func importItem(_ entry: JSONValue, number: Int) -> Import? {
        let counts = entry["import"]
        guard entry["kind"]?.stringValue == "imported" || entry["via"]?.stringValue == "import" else { return nil }
        func count(_ key: String) -> Int { Int(counts?[key]?.int64Value ?? 0) }
        var item = Import(user: entry["user"]?.stringValue, uid: entry["uid"]?.int64Value.map(Int.init),
                          count: counts == nil ? 1 : count("added") + count("updated"),
                          firstEntry: number, lastEntry: number)
        if let undone = entry["reverts"]?.int64Value {
            item.undid = Import.Undo(entry: Int(undone), removed: count("removed"), restored: count("updated"))
        }
        return item
    }

    /// Entries (newest first) as one import per person, oldest import first; each undo of an
    /// import on its own.
    static func grouped(_ entries: [Import]) -> [Import] {
        var imports: [Import] = []
        for entry in entries.reversed() {
            if entry.undid == nil, let index = imports.lastIndex(where: {
                $0.undid == nil && $0.user == entry.user && $0.uid == entry.uid
            }) {
                imports[index].count += entry.count
                imports[index].firstEntry = min(imports[index].firstEntry, entry.firstEntry)
                imports[index].lastEntry = max(imports[index].lastEntry, entry.lastEntry)
            } else {
                imports.append(entry)
            }
        }
        return imports
    }

    private func page(before: Int?, limit: Int) async throws -> (entries: [JSONValue], next: Int?) {
        var args: [String: JSONValue] = ["limit": .int(Int64(limit))]
        if let before { args["before"] = .int(Int64(before)) }
        let result = try await client.send(screen: "session", action: "history", args: args)
        return (result?["entries"]?.arrayValue ?? [], result?["next"]?.int64Value.map(Int.init))
    }
}
