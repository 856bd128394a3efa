import UserListClient
import UserListWire

/// `userctl set ID [--name N] [--email E] [--avatar-url U | --no-avatar] [--expected-version V]`:
/// changes only the fields given, in one `set_user` intent on the session screen (no screen of
/// the session moves), optionally only while the user is still at version V. Exit codes as
/// `rename`: 65 invalid field or unknown id, 75 conflict (someone saved since V), 77 read-only.
enum SetCommand {
    static let spec = CommandSpec(name: "set", positionals: ["ID"], options: [
        OptionSpec(name: "name", value: "NAME", help: "the new full name"),
        OptionSpec(name: "email", value: "EMAIL", help: "the new email address"),
        OptionSpec(name: "avatar-url", value: "URL", help: "the new avatar image URL"),
        OptionSpec(name: "no-avatar", value: nil, help: "remove the avatar"),
        OptionSpec(name: "expected-version", value: "V", help: "change the user only if it is still at version V"),
    ], summary: "change some fields of a user",
        details: """
        Changes only the fields given (at least one), in one step, without moving any screen of
        the session; the fields not given keep what is stored, whoever changed them last.
        With --expected-version V the change is made only while the user is at version V (what
        'userctl show' printed), so a change made since is never overwritten. Prints the user
        (with --json, as a JSON object). When every field given is stored already nothing
        changes (no new version): it says 'unchanged: …' and exits 0 (--json: "unchanged": true).
        """ + "\n" + Help.idDetails
            + "\nExits 65 when a field is invalid or the id unknown or ambiguous, 75 on a conflict (the user is no\n"
            + "longer at version V, or someone saved at the same moment), 77 on a read-only session.")

    /// The intent's arguments from the command line, or a usage error saying what is missing.
    static func arguments(_ invocation: Invocation) throws(UsageError) -> [String: JSONValue] {
        let values = invocation.values
        var args: [String: JSONValue] = [:]
        if let name = values["name"] { args["name"] = .string(name) }
        if let email = values["email"] { args["email"] = .string(email) }
        if invocation.flags.contains("no-avatar") {
            guard values["avatar-url"] == nil else {
                throw UsageError(message: "'userctl set' takes --avatar-url or --no-avatar, not both", command: "set")
            }
            args["avatar_url"] = .null
        } else if let avatar = values["avatar-url"] {
            args["avatar_url"] = .string(avatar)
        }
        guard !args.isEmpty else {
            throw UsageError(message: "'userctl set' needs at least one of --name, --email, --avatar-url, --no-avatar",
                             command: "set")
        }
        if let version = try Arguments.positiveInt(invocation, "expected-version") {
            args["expected_version"] = .int(Int64(version))
        }
        return args
    }

    static func run(_ context: CommandContext) async throws {
        var args = try arguments(context.invocation)
        let id = try await UserIDArgument.resolve(context.invocation.positionals[0], context.client)
        args["id"] = .string(id)
        let saved: JSONValue?
        do {
            saved = try await context.client.send(screen: "session", action: "set_user", args: args)
        } catch let error as ClientError {
            throw CommandFailure(error, "cannot change \(id): \(error.message)")
        }
        guard let user = UserRow(saved) else {
            throw CommandFailure(.dataError, "the daemon did not return the changed user")
        }
        let avatar = user.avatarURL.map { DisplayWidth.sanitized($0) } ?? "no avatar"
        let (name, email) = (DisplayWidth.sanitized(user.name), DisplayWidth.sanitized(user.email))
        let fields = "\"\(name)\" <\(email)> \(avatar) (version \(user.version))"
        printSaved(user, reply: saved, json: context.json, changed: "changed \(user.id): \(fields)",
                   unchanged: "unchanged: \(user.id) already has \(fields)")
    }

    /// The saved user, as `set` and `rename` print it. The daemon says `unchanged` when every
    /// field given was stored already (no new version): then the line says so, and `--json`
    /// keeps it.
    static func printSaved(_ user: UserRow, reply: JSONValue?, json: Bool, changed: String, unchanged: String) {
        let same = reply?["unchanged"] == true
        guard json else { return print(same ? unchanged : changed) }
        guard same, case .object(var fields) = user.json else { return print(user.json.description) }
        fields["unchanged"] = true
        print(JSONValue.object(fields).description)
    }
}
