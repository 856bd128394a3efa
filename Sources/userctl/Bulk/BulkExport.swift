import Foundation
import UserListClient
import UserListWire

/// `userctl export` and `userctl list --all`: every user in list order, read page by page with
/// the session's `export_page` (a keyset cursor in the daemon's store, not the list screen), and
/// written as each page arrives: linear time, and memory for one page on both sides.
///
/// Not a snapshot: users saved while an export runs may appear with their old or new data, and a
/// user renamed across the cursor's position may be missed or seen twice.
enum BulkExport {
    /// Users an export page asks for; the daemon may send fewer (a page ends at about 1 MiB).
    /// Big pages keep an export under the intent rate (150 pages a second as userctl paces).
    static let exportPageSize = 10_000
    /// What a daemon from before big pages accepts, and what `first` asks for.
    static let pageSize = 1_000

    /// Walks every page of `search` (nil: everyone), calling `body` with each page's users (as
    /// the bytes they came in: see `JSONSlice`) and the total when the daemon knows it. Stops
    /// early (returns false) on Ctrl-C.
    ///
    /// The next page is asked for as soon as a page arrives, before `body` formats and writes
    /// this one, so the daemon reads and encodes while the client writes (one page ahead: memory
    /// stays at two pages).
    static func walk(_ client: UserListClient, search: String?, progress: Progress,
                     _ body: ([JSONSlice], Int?) throws -> Void) async throws -> (count: Int, complete: Bool) {
        Interruption.install()
        var count = 0
        var total: Int?
        var size = exportPageSize
        func request(after: String?) -> Task<JSONSlice?, any Error> {
            var args: [String: JSONValue] = ["limit": .int(Int64(size))]
            if let after { args["after"] = .string(after) }
            if let search { args["search"] = .string(search) }
            return Task { try await client.sendForSlice(screen: "session", action: "export_page", args: args) }
        }
        var pending: Task<JSONSlice?, any Error>? = request(after: nil)
        while let current = pending {
            let page: ExportPage
            do {
                page = try ExportPage(try await current.value)
            } catch let error as ClientError where error.serverCode == .invalidArgs && count == 0 && size > pageSize {
                size = pageSize  // a daemon from before big pages
                pending = request(after: nil)
                continue
            }
            pending = page.next.map { request(after: $0) }
            if let known = page.totalCount { total = known }
            try body(page.users, total)
            count += page.users.count
            progress.update(done: count, fraction: total.map { Double(count) / Double(max(1, $0)) })
            if Interruption.requested && page.next != nil {
                pending?.cancel()
                progress.finish()
                return (count, false)
            }
        }
        progress.finish()
        return (count, true)
    }

    /// The first `count` users of `search` (nil: everyone) in list order, a page of at most
    /// `pageSize` at a time; whether more follow, and the total when the daemon knows it.
    static func first(_ count: Int, _ client: UserListClient, search: String?) async throws
        -> (users: [JSONValue], totalCount: Int?, hasMore: Bool) {
        var users: [JSONValue] = []
        var after: String?
        var total: Int?
        repeat {
            var args: [String: JSONValue] = ["limit": .int(Int64(min(pageSize, count - users.count)))]
            if let after { args["after"] = .string(after) }
            if let search { args["search"] = .string(search) }
            let page = try await client.send(screen: "session", action: "export_page", args: args)
            users += page?["users"]?.arrayValue ?? []
            if let known = page?["total_count"]?.int64Value { total = Int(known) }
            after = page?["next"]?.stringValue
        } while after != nil && users.count < count
        let more = total.map { users.count < $0 } ?? (after != nil)
        return (users, total, more)
    }

    /// `export`: one JSON array, one user per line (the same bytes as before, now streamed).
    static func export(_ context: CommandContext) async throws {
        let progress = Progress(verb: "export", json: context.json, quiet: context.invocation.flags.contains("quiet"),
                                streamsToStdout: true)
        var lines = JSONLines()
        let (count, complete) = try await walk(context.client, search: nil, progress: progress) { users, _ in
            lines.append(users)
        }
        if !complete {
            lines.abandon()
            throw CommandFailure(.interrupted, "interrupted: \(Plural.users(count)) \(count == 1 ? "was" : "were") "
                                 + "written, the rest of the export was not (the output is incomplete: no closing ']')")
        }
        lines.close()
    }

    /// `list --all`: every user, as a table (column widths from the first page) or, with
    /// `--json`, as `export` writes them.
    static func listAll(_ context: CommandContext, search: String?) async throws {
        if context.json {
            let progress = Progress(verb: "list", json: true, quiet: context.invocation.flags.contains("quiet"),
                                    streamsToStdout: true)
            var lines = JSONLines()
            let (count, complete) = try await walk(context.client, search: search, progress: progress) { users, _ in
                lines.append(users)
            }
            if !complete {
                throw CommandFailure(.interrupted,
                                     "interrupted after \(Plural.users(count)) (the output is incomplete)")
            }
            lines.close()
            return
        }
        let progress = Progress(verb: "list", json: false, quiet: context.invocation.flags.contains("quiet"),
                                streamsToStdout: true)
        var table: UserTable?
        let (count, complete) = try await walk(context.client, search: search, progress: progress) { users, _ in
            let rows = users.compactMap { try? $0.parsed() }.compactMap(UserRow.init)
            var lines: [String] = []
            if table == nil {
                let first = UserTable(fitting: rows, shorten: context.terminal)
                lines.append(first.header(style: context.style))
                table = first
            }
            lines += rows.map(table!.line)
            if !lines.isEmpty { print(lines.joined(separator: "\n")) }
        }
        if !complete { throw CommandFailure(.interrupted, "interrupted after \(Plural.users(count))") }
        if table == nil { print(context.style.bold("NAME  EMAIL  ID")) }
        if let search, count == 0 { return context.footer(Commands.noMatch(search)) }
        context.footer(Plural.users(count))
    }
}
