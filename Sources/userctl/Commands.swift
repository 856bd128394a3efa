import Foundation
import Glibc
import UserListClient
import UserListWire

/// What every command gets: the parsed command line, a connected client, and how to print.
struct CommandContext {
    let invocation: Invocation
    let client: UserListClient
    let style: Style

    var json: Bool { invocation.json }

    /// Whether stdout is a terminal: tables then fit the screen and end with a count; for a
    /// pipe or a file they never cut a value, and the count goes to stderr.
    var terminal: Bool { isatty(1) == 1 }

    /// A table's closing count ("3 of 27 users (more: --all)"): the last line on a terminal,
    /// on stderr otherwise, so that stdout holds nothing but the rows a script reads.
    func footer(_ text: String) {
        if terminal { print(style.dim(text)) } else if !json { Console.err(text) }
    }
}

/// Bold and dim only when stdout is a terminal and NO_COLOR is unset. The styles are markers
/// that `Console` turns into SGR sequences after escaping the text (see `Console`).
struct Style {
    let enabled: Bool

    static func detect(json: Bool) -> Style {
        Style(enabled: !json && isatty(1) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil)
    }

    private func styled(_ code: UInt32, _ text: String) -> String {
        guard enabled else { return text }
        var marker = String.UnicodeScalarView()
        marker.append(Console.styleStart)
        marker.append(Unicode.Scalar(0xF800 + code)!)
        return String(marker) + text + String(Character(Console.styleEnd))
    }

    func bold(_ text: String) -> String { styled(1, text) }
    func dim(_ text: String) -> String { styled(2, text) }
    func red(_ text: String) -> String { styled(31, text) }
}

enum Commands {
    static func run(_ context: CommandContext) async throws(CommandFailure) {
        do {
            switch context.invocation.command {
            case "list": try await list(context)
            case "show": try await show(context)
            case "rename": try await rename(context)
            case "set": try await SetCommand.run(context)
            case "add": try await add(context)
            case "remove": try await remove(context)
            case "import": try await importUsers(context)
            case "export": try await export(context)
            case "watch": await watch(context)
            case "status": try await introspect(context, action: "status")
            case "sessions": try await introspect(context, action: "sessions")
            case "history": try await HistoryCommands.history(context)
            case "revert": try await HistoryCommands.revert(context)
            default: throw CommandFailure(.software, "command \(context.invocation.command ?? "-") is not wired")
            }
        } catch let failure as CommandFailure {
            throw failure
        } catch let error as ClientError {
            throw CommandFailure(error)
        } catch let error as UsageError {
            throw CommandFailure(.usage, error.message)
        } catch {
            throw CommandFailure(.software, "\(error)")
        }
    }

    // MARK: reading

    /// How many users `list` prints without `--page-size`: a screenful, as the list shows.
    static let defaultListSize = 50

    /// `list [--page-size N] [--search TEXT]`: the first N users in list order, read with the
    /// session's `export_page` (up to 1,000 users an intent, paced under the daemon's limit), so
    /// neither a large N nor a shared session's list screen is a problem: the screens are untouched.
    static func list(_ context: CommandContext) async throws {
        let invocation = context.invocation
        let pageSize = try Arguments.positiveInt(invocation, "page-size")
        let search = invocation.values["search"]
        if invocation.flags.contains("all") { return try await BulkExport.listAll(context, search: search) }
        let first = try await BulkExport.first(pageSize ?? defaultListSize, context.client, search: search)
        let shown = first.users.compactMap(UserRow.init)
        if context.json {
            printJSONArray(shown.map(\.json))
            return
        }
        print(tableText(shown, style: context.style, shorten: context.terminal))
        if let search, shown.isEmpty { return context.footer(noMatch(search)) }
        let total = first.totalCount.map { " of \($0)" } ?? ""
        context.footer((total.isEmpty ? Plural.users(shown.count) : "\(shown.count)\(total) users")
                       + (first.hasMore ? " (more: --all)" : ""))
    }

    /// What `list --search TEXT` says when no user matches (not "0 of 0 users").
    static func noMatch(_ search: String) -> String {
        "no user matches \"" + DisplayWidth.sanitized(search) + "\""
    }

    /// The users as aligned NAME EMAIL ID columns (`UserTable`); `shorten`: cut to fit a screen.
    static func tableText(_ users: [UserRow], style: Style, shorten: Bool = true) -> String {
        UserTable(fitting: users, shorten: shorten).text(users, style: style)
    }

    static func printUser(_ user: UserRow, _ context: CommandContext) {
        print(context.json ? user.json.description : userText(user, style: context.style))
    }

    /// One user as `field: value` lines, values escaped (`TerminalText`).
    static func userText(_ user: UserRow, style s: Style) -> String {
        ["\(s.bold("name:"))    \(DisplayWidth.sanitized(user.name))",
         "\(s.bold("email:"))   \(DisplayWidth.sanitized(user.email))",
         "\(s.bold("avatar:"))  \(user.avatarURL.map(DisplayWidth.sanitized) ?? "-")",
         "\(s.bold("id:"))      \(user.id)",
         "\(s.bold("version:")) \(user.version)"].joined(separator: "\n")
    }

    static func printJSONArray(_ values: [JSONValue]) {
        if values.isEmpty { print("[]"); return }
        print("[")
        for (index, value) in values.enumerated() {
            print("  " + value.description + (index == values.count - 1 ? "" : ","))
        }
        print("]")
    }

    /// Opens the detail screen for `id`, returning the loaded user.
    static func openUser(_ client: UserListClient, _ id: String) async throws -> UserRow {
        let result: JSONValue?
        do {
            result = try await client.send(screen: "session", action: "open_user", args: ["id": .string(id)])
        } catch let error as ClientError where error.serverCode == .notFound {
            // The daemon cannot tell a removed user from one that never was; neither can we.
            throw CommandFailure(.dataError, "no user with id \(id)")
        }
        guard let user = UserRow(result) ?? SessionDocument(client.document).detail?.user else {
            throw CommandFailure(.dataError, "no user with id \(id)")
        }
        return user
    }

    static func show(_ context: CommandContext) async throws {
        let id = try await UserIDArgument.resolve(context.invocation.positionals[0], context.client)
        let user = try await openUser(context.client, id)
        _ = try? await context.client.send(screen: "detail", action: "back")
        printUser(user, context)
    }

    static func rename(_ context: CommandContext) async throws {
        let id = try await UserIDArgument.resolve(context.invocation.positionals[0], context.client)
        let name = context.invocation.positionals[1]
        // One intent on the session screen: the store changes, no screen of a shared session moves.
        let saved: JSONValue?
        do {
            saved = try await context.client.send(screen: "session", action: "rename_user",
                                                  args: ["id": .string(id), "name": .string(name)])
        } catch let error as ClientError {
            throw CommandFailure(error, "cannot rename \(id): \(error.message)")
        }
        guard let user = UserRow(saved) else {
            throw CommandFailure(.dataError, "the daemon did not return the renamed user")
        }
        let shown = "\"\(DisplayWidth.sanitized(user.name))\" (version \(user.version))"
        SetCommand.printSaved(user, reply: saved, json: context.json, changed: "renamed \(user.id) to \(shown)",
                              unchanged: "unchanged: \(user.id) is already named \(shown)")
    }

    static func add(_ context: CommandContext) async throws {
        let values = context.invocation.values
        // Both required (`OptionSpec.required`): the parser refused a command line without them.
        guard let name = values["name"], let email = values["email"] else {
            throw UsageError(message: "'userctl add' needs --name and --email", command: "add")
        }
        var args: [String: JSONValue] = ["name": .string(name), "email": .string(email)]
        if let avatar = values["avatar-url"] { args["avatar_url"] = .string(avatar) }
        let result = try await context.client.send(screen: "session", action: "add_user", args: args)
        guard let user = UserRow(result) else {
            if !context.json { print("added \(name)") }
            return
        }
        if context.json {
            print(user.json.description)
        } else {
            print("added \(user.id) \(DisplayWidth.sanitized(user.name))")
        }
    }

    static func remove(_ context: CommandContext) async throws {
        let id = try await UserIDArgument.resolve(context.invocation.positionals[0], context.client,
                                                  minimumPrefix: UserIDArgument.destructiveMinimum,
                                                  action: "remove a user")
        try await context.client.send(screen: "session", action: "remove_user", args: ["id": .string(id)])
        if context.json {
            print(JSONValue.object(["removed": .string(id)]).description)
        } else {
            print("removed \(id)")
        }
    }

    static func importUsers(_ context: CommandContext) async throws {
        try await BulkImport.run(context)
    }

    static func export(_ context: CommandContext) async throws {
        try await BulkExport.export(context)
    }

    static func introspect(_ context: CommandContext, action: String) async throws {
        let result: JSONValue
        do {
            result = try await context.client.send(screen: "session", action: action) ?? .null
        } catch let error as ClientError where error.serverCode == .forbidden {
            let what = action == "status" ? "the daemon's status" : "its sessions"
            throw CommandFailure(error, forbiddenText(what, error.message))
        }
        if context.json {
            print(result.description)
            return
        }
        switch action {
        case "sessions": print(Introspect.sessionsTable(result).render(style: context.style))
        default:
            let socket = context.client.configuration.socketPath
            let daemon = DaemonLocator().describe(socket: socket, pid: result["pid"]?.int64Value.map(Int.init))
            // The store's count: one page of one user (read-only sessions may ask; status is for admins).
            let page = try? await context.client.send(screen: "session", action: "export_page",
                                                      args: ["limit": .int(1)])
            let users = page?["total_count"]?.int64Value.map(Int.init)
            let table = Introspect.statusTable(result, daemon: daemon, socket: socket, users: users)
            print(table.render(style: context.style))
        }
    }

    /// Who may see `what`, and how to join them: the daemon names its admin group in `message`
    /// ("… members of the 'userlistd' group."), which is all userctl knows of it.
    static func forbiddenText(_ what: String, _ message: String) -> String {
        guard let range = message.range(of: #"'[^']+' group"#, options: .regularExpression) else { return message }
        let group = message[range].dropFirst().prefix { $0 != "'" }
        let me = DaemonLocator.loginName
        return "only root and members of the group '\(group)' may see \(what). "
            + "Ask an admin: usermod -aG \(group) \(me) (it takes effect within seconds)"
    }

    // MARK: watch

    static func watch(_ context: CommandContext) async {
        let client = context.client
        let interrupts = [SIGINT, SIGTERM].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { client.close() }
            source.resume()
            return source
        }
        defer { interrupts.forEach { $0.cancel() } }
        let imports = WatchImports(client: client)
        await imports.start()
        if !context.json {
            Console.err("userctl: watching for changes (Ctrl-C to stop)")
        }
        for await update in client.updates {
            switch update {
            case .event(let event) where event.screen == "session" && event.name == "reloaded":
                await reportReload(imports, context)
                fflush(nil)
            case .event(let event):
                if context.json {
                    let object: JSONValue = .object(["screen": .string(event.screen), "name": .string(event.name),
                                                     "payload": event.payload])
                    print(object.description)
                } else {
                    print(describe(event, style: context.style))
                }
                fflush(nil)
            case .connection(let state):
                if context.json {
                    print(JSONValue.object(["connection": .string(connectionWord(state))]).description)
                } else if case .closed(let reason) = state, reason != "closed by the client" {
                    Console.err("userctl: \(reason)")
                } else if case .closed = state {
                } else {
                    Console.err("userctl: \(connectionWord(state))")
                }
                fflush(nil)
            case .state, .serverError:
                break
            }
        }
    }

    /// A `reloaded` event: the imports it stands for, from the history, or that the users were
    /// read again when the history names none.
    static func reportReload(_ imports: WatchImports, _ context: CommandContext) async {
        let (found, complete) = await imports.since()
        let more = complete ? "" : " or more"
        if found.isEmpty {
            if context.json {
                print(JSONValue.object(["screen": "session", "name": "reloaded", "payload": .object([:])]).description)
            } else {
                print("\(context.style.dim(timestamp())) \(context.style.bold("reload ")) the users changed in bulk "
                      + "(changes the daemon could not follow one by one); screens read them again")
            }
            return
        }
        for item in found {
            if context.json {
                var payload = item.json
                if !complete, case .object(var fields) = payload {
                    fields["complete"] = false
                    payload = .object(fields)
                }
                print(JSONValue.object(["screen": "session", "name": "imported", "payload": payload]).description)
            } else {
                print("\(context.style.dim(timestamp())) \(context.style.bold("import ")) \(item.text)\(more)")
            }
        }
    }

    static func connectionWord(_ state: ConnectionState) -> String {
        switch state {
        case .connecting: "connecting"
        case .connected: "connected"
        case .reconnecting: "reconnecting"
        case .closed: "closed"
        }
    }

    static func describe(_ event: ServerMessage.Event, style: Style) -> String {
        let time = timestamp()
        let payload = event.payload
        let user = UserRow(payload["user"])
        let id = payload["id"]?.stringValue ?? user?.id ?? ""
        switch (event.screen, event.name) {
        case ("session", "changed"):
            let kind = payload["kind"]?.stringValue ?? "changed"
            let name = user.map {
                " \"\(DisplayWidth.sanitized($0.name))\" <\(DisplayWidth.sanitized($0.email))> version \($0.version)"
            } ?? ""
            let padded = kind.padding(toLength: 7, withPad: " ", startingAt: 0)
            return "\(style.dim(time)) \(style.bold(padded)) \(id)\(name)"
        default:
            return "\(style.dim(time)) \(event.screen).\(event.name) \(payload.description)"
        }
    }

    static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        return String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}

/// Reads users to import: the wire shape, or the REST DTO shape (`full_name`, maybe `avatar`).
enum ImportFile {
    /// One user of an import file in the wire shape; `entry` is its 1-based place in the file.
    static func normalizeOne(_ item: JSONValue, entry: Int, source: String) throws(CommandFailure) -> JSONValue {
        guard case .object(let object) = item else {
            throw CommandFailure(.dataError, "\(source): entry \(entry) is not an object")
        }
        guard let name = (object["name"] ?? object["full_name"] ?? object["fullName"])?.stringValue else {
            throw CommandFailure(.dataError, "\(source): entry \(entry) has no \"name\" or \"full_name\"")
        }
        guard let email = object["email"]?.stringValue else {
            throw CommandFailure(.dataError, "\(source): entry \(entry) has no \"email\"")
        }
        // No id: a new user, its id derived from the email so that importing again skips it.
        let id = object["id"].flatMap { $0.stringValue ?? $0.int64Value.map { String($0) } }
            ?? ImportID.derived(fromEmail: email)
        let avatar = (object["avatar_url"] ?? object["avatarUrl"] ?? object["avatar"])?.stringValue
        var user: [String: JSONValue] = ["id": .string(id), "name": .string(name), "email": .string(email),
                                         "avatar_url": avatar.map(JSONValue.string) ?? .null]
        if let version = object["version"], version != .null {
            // Dropping a version it cannot read would skip the conflict check the entry asks for.
            guard let number = version.int64Value else {
                throw CommandFailure(.dataError, "\(source): entry \(entry) has a \"version\" that is not a whole "
                                     + "number (\(version))")
            }
            user["version"] = .int(number)
        }
        return .object(user)
    }
}
