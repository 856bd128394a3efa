import UserListClient
import UserListWire

/// `userctl status` and `userctl sessions` as operators read them: the figures they check first,
/// in words, one duration format (`DurationText`), names rather than uids. `--json` prints the
/// daemon's objects unchanged.
enum Introspect {
    /// The daemon's status as FIELD VALUE rows: which daemon, then what it holds and serves.
    /// `users`: the store's count (from an `export_page`), nil when the daemon could not say.
    static func statusTable(_ status: JSONValue, daemon: String, socket: String, users: Int?) -> Table {
        var rows: [[String]] = [["daemon", daemon], ["socket", socket]]
        func add(_ field: String, _ value: String?) { if let value { rows.append([field, value]) } }
        add("version", status["version"]?.stringValue)
        add("uptime", status["uptime_seconds"]?.doubleValue.map { DurationText.of(seconds: $0) })
        add("users", users.map { Progress.grouped($0) } ?? "-")
        var store = status["store"]?.stringValue ?? "-"
        if status["store_available"]?.boolValue == false {
            store += " (unavailable: \(status["store_problem"]?.stringValue ?? "no reason given"))"
        }
        add("store", store)
        add("sessions", status["sessions"].map { Table.cell($0) })
        add("clients", status["clients"].map { Table.cell($0) })
        add("connections", status["connections"].map { Table.cell($0) })
        add("memory", status["rss_bytes"]?.int64Value.map { "\(($0 + 524_288) / 1_048_576) MiB resident" })
        // Fields a newer daemon adds are not lost: they follow, flattened.
        let shown: Set<String> = ["version", "uptime_seconds", "store", "store_available", "store_problem", "sessions",
                                  "clients", "connections", "rss_bytes", "pid"]
        for extra in flattened(status).filter({ !shown.contains($0[0]) }) { rows.append(extra) }
        return Table(headers: ["FIELD", "VALUE"], rows: rows)
    }

    /// One row per session: who (login name), the screen, whether a draft is held, then the
    /// rest; sorted by user, then the most recently active first.
    static func sessionsTable(_ result: JSONValue) -> Table {
        let sessions = (result.arrayValue ?? result["sessions"]?.arrayValue ?? []).filter { $0["truncated"] == nil }
        let sorted = sessions.sorted { a, b in
            let (userA, userB) = (who(a), who(b))
            if userA != userB { return userA < userB }
            return (a["idle_seconds"]?.doubleValue ?? 0) < (b["idle_seconds"]?.doubleValue ?? 0)
        }
        var table = Table(headers: ["USER", "SCREEN", "DRAFT", "CLIENTS", "IDLE", "ACCESS", "KEY", "ID"], rows: [],
                          numeric: [3, 4])
        for session in sorted {
            let screen = session["screen"]?.stringValue ?? session["screens"].map { "\(Table.cell($0)) screens" } ?? "-"
            let draft = session["draft"]?.boolValue.map { $0 ? "yes" : "no" } ?? "-"
            let idle = session["idle_seconds"]?.doubleValue.map { DurationText.of(seconds: $0) } ?? "-"
            let access = session["read_only"]?.boolValue.map { $0 ? "read-only" : "read-write" } ?? "-"
            table.rows.append([who(session), screen, draft, Table.cell(session["clients"]), idle, access,
                               Table.cell(session["key"]), Table.cell(session["id"])])
        }
        if let more = sessions.count < (result.arrayValue?.count ?? 0) ? result.arrayValue?.last : nil {
            table.rows.append(["(\(Table.cell(more["omitted"])) more)", "", "", "", "", "", "", ""])
        }
        return table
    }

    /// The session's login name, or "uid N" where the daemon knows no name for it.
    static func who(_ session: JSONValue) -> String {
        session["user"]?.stringValue ?? session["uid"].map { "uid \(Table.cell($0))" } ?? "-"
    }

    /// `value` as FIELD VALUE rows, nested objects joined with dots.
    static func flattened(_ value: JSONValue, _ prefix: String = "") -> [[String]] {
        if let object = value.objectValue {
            return object.keys.sorted().flatMap { flattened(object[$0]!, prefix.isEmpty ? $0 : prefix + "." + $0) }
        }
        if let array = value.arrayValue {
            if array.contains(where: { $0.objectValue != nil }) {
                return array.enumerated().flatMap { flattened($1, "\(prefix)[\($0 + 1)]") }
            }
            return [[prefix, array.map { Table.cell($0) }.joined(separator: ", ")]]
        }
        return [[prefix, Table.cell(value)]]
    }
}
