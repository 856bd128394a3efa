import Foundation

/// Every command userctl knows, with the text its `--help` prints.
enum Help {
    static let commands: [CommandSpec] = [
        CommandSpec(name: "list", aliases: ["ls"], positionals: [], options: [
            OptionSpec(name: "page-size", value: "N", help: "print at most N users (loading pages as needed)",
                       short: "n"),
            OptionSpec(name: "all", value: nil,
                       help: "print every user, streamed page by page from the daemon's store"),
            OptionSpec(name: "search", value: "TEXT",
                       help: "only users whose name or email contains TEXT (ignoring case and accents)"),
            OptionSpec(name: "quiet", value: nil, help: "no progress on stderr (with --all)"),
        ], summary: "list users", details: """
                    Prints the first 50 users (or N, or all), read from the daemon's store 1,000 at a time and paced
                    under its rate limit, so any N works. With --json: one JSON array of user objects.
                    With --all the table's column widths come from the first 1,000 users.
                    On a terminal long names and emails are cut to fit (…) and a count ends the table; to a pipe
                    or a file nothing is cut, there is no colour, and the count goes to stderr.
                    """),
        CommandSpec(name: "show", positionals: ["ID"], options: [], summary: "show one user",
                    details: "Prints the user. With --json: one JSON object.\n" + idDetails),
        CommandSpec(name: "rename", positionals: ["ID", "NAME"], options: [], summary: "rename a user",
                    details: "Renames the user in one step, without moving any screen of the session. A name the\n"
                        + "user has already changes nothing: 'unchanged: …', exit 0 (--json: \"unchanged\": true).\n"
                        + idDetails
                        + "\nExits 65 when the name is invalid or the id unknown or ambiguous, 75 on a conflict."),
        SetCommand.spec,
        CommandSpec(name: "add", positionals: [], options: [
            OptionSpec(name: "name", value: "NAME", help: "full name (required)", required: true),
            OptionSpec(name: "email", value: "EMAIL", help: "email address (required)", required: true),
            OptionSpec(name: "avatar-url", value: "URL", help: "avatar image URL"),
        ], summary: "add a user", details: "Prints the new user (with --json, as a JSON object).\n"
            + "Exits 65 when a field is invalid or the email is already another user's (retrying cannot help)."),
        CommandSpec(name: "remove", aliases: ["rm", "delete"], positionals: ["ID"], options: [],
                    summary: "remove a user",
                    details: "Removes the user with this id or email.\n" + idDetails
                        + "\nA start of an id must have at least "
                        + "\(UserIDArgument.destructiveMinimum) characters here, as git asks for."),
        CommandSpec(name: "import", positionals: ["FILE"], options: [
            OptionSpec(name: "quiet", value: nil, help: "no progress on stderr"),
        ], summary: "import users from a JSON file",
                    details: """
                    FILE (or - for stdin) holds a JSON array of users, or one user object per line
                    (JSON Lines), either in the wire shape {id, name, email, avatar_url, version}
                    or in the REST shape with full_name; a UTF-8 byte-order mark is skipped.
                    An entry without "id" is a new user; its id is derived from its email, so that
                    importing the same file again skips it instead of adding it twice. A user the
                    file names twice is imported as its last entry has it (userctl says so).
                    All or nothing: the file is streamed (any size; userctl keeps 16 bytes of each
                    user's id, to count the users the file names) to the daemon,
                    which keeps it aside until the whole file is there, then applies every entry or,
                    if any is refused (invalid, an email another user has, or a "version" older than
                    the stored one), none; the error names the first bad entry by its place in the
                    file (1-based) and its id. Ctrl-C, a bad entry or a lost daemon before the whole
                    file is sent imports nothing (userctl says so). Once the daemon has the whole
                    file, the import is its own: Ctrl-C only stops the waiting, and a daemon crash
                    or restart finishes it. A changed user gets a new version; an unchanged one is
                    not written. Open terminals get the import as one reload of what they show.
                    Progress goes to stderr: a bar on a terminal, a line every few seconds
                    otherwise, JSON lines with --json, nothing with --quiet; it counts the users
                    the daemon has taken.
                    Exits 66 when FILE is missing, 65 when it is empty or not such a file, or an entry is
                    refused (an email another user has included), 130 on Ctrl-C; 69 when the store
                    failed while applying a file the daemon had whole: the message says the import
                    was accepted whole ("kept": true with --json), and the daemon applies it once
                    the store is back. Do not run it again.
                    """),
        CommandSpec(name: "export", positionals: [], options: [
            OptionSpec(name: "quiet", value: nil, help: "no progress on stderr"),
        ], summary: "print all users as a JSON array",
                    details: "Streams every user page by page from the daemon's store and prints one JSON array,\n"
                        + "one user per line. Progress goes to stderr (see import). Ctrl-C stops it (exit 130; the\n"
                        + "output then has no closing ']')."),
        CommandSpec(name: "watch", positionals: [], options: [], summary: "print changes as they happen",
                    details: """
                    Prints each change until interrupted: a user saved, added or removed elsewhere, one line
                    each, and an import as who imported how many users, read from the history
                    ("alice imported 20,000 users (#31)": the entry 'userctl revert' takes to undo it whole),
                    made through this daemon or another sharing its store, and an undo of one as "bob undid
                    import #31: 20,000 removed, 0 restored (#35)". When the daemon could not follow changes
                    one by one it says the users were read again. With --json: one object per line,
                    {"screen", "name", "payload"} as the daemon sends them; an import is {"screen":
                    "session", "name": "imported", "payload": {"user", "uid", "count", "first_entry",
                    "last_entry"}}, its undo the same with "undid", "removed" and "restored".
                    """),
        CommandSpec(name: "history", positionals: [], optionalPositionals: ["ID"], options: [
            OptionSpec(name: "by", value: "USER", help: "only changes made by USER (a login name or a uid)"),
            OptionSpec(name: "since", value: "TIME",
                       help: "only changes since TIME (2026-12-01T09:00:00Z, 2026-12-01, or 30m, 2h, 7d ago)"),
            OptionSpec(name: "kind", value: "KIND", help: "only changes of KIND: added, saved, removed, imported"),
            OptionSpec(name: "via", value: "SOURCE",
                       help: "only changes from SOURCE: tui, userctl, import, another-daemon"),
            OptionSpec(name: "date", value: "FORMAT",
                       help: "when, as relative (3 min ago, the default), iso (UTC) or local"),
            OptionSpec(name: "limit", value: "N", help: "print at most N changes (default 50)"),
        ], summary: "show who changed what, newest first",
                    details: """
                    Prints the changes to the user ID (without ID, to every user), newest first, like git log:
                    the entry number (what 'userctl revert' takes), when, who (login name, or uid), where from
                    (TUI: a screen; userctl: a one-shot command; import; another daemon on the same store: what
                    --via takes; an undo is where it was made, its change saying "undoes #N"), and what
                    changed. An import is one entry (its file, how many users it added and
                    updated); a user's own history shows what it did to them as "imported in #N". When more
                    entries match than are printed, the last line says how many ("N more: --limit M").
                    With --json: one array of objects with entry, at (RFC 3339, whatever --date says), uid, user,
                    client, kind (added, saved, removed, imported), via (intent, command, import, daemon),
                    user_id, reverts, before and after (objects with name, email and avatar_url, or null), import
                    (source, added, updated, removed: an import's entry) and part_of_import (a user's part of one).
                    The daemon keeps history-days of history (default 365).
                    """ + "\n" + idDetails),
        CommandSpec(name: "revert", positionals: ["ENTRY"], options: [
            OptionSpec(name: "force-skip-changed", value: nil,
                       help: "undo an import although some of its users changed since, leaving those as they are"),
        ], summary: "undo one change from the history",
                    details: """
                    Applies the inverse of history entry ENTRY as an ordinary save: a rename goes back to the
                    name before, an added user is removed, a removed user comes back. It is recorded as its own
                    entry. Exits 75 (conflict) when the user changed since the entry: revert the later changes
                    first. Exits 65 when no entry ENTRY is kept (never recorded, or older than history-days), and
                    when the change is undone already (nothing to do); 64 when ENTRY is not a positive number.
                    An import is undone whole, all or nothing: the users it added are removed, the users it
                    updated get their fields back. When users changed since the import, they are listed and
                    nothing is undone (exit 75), unless --force-skip-changed leaves them as they are and undoes
                    the rest.
                    Exits 77 on a read-only session (reading history needs no write access).
                    """),
        CommandSpec(name: "status", positionals: [], options: [], summary: "show the daemon's status", details: """
                    Which daemon answered (the system's, your private one, or the one --socket names), its
                    socket, version, uptime, how many users it stores, the store, its sessions, clients
                    and connections, and its memory. For root and the admin group. With --json: the
                    daemon's own object (version, pid, uptime_seconds, sessions, clients, connections,
                    store, store_available, store_problem, rss_bytes).
                    """),
        CommandSpec(name: "sessions", positionals: [], options: [], summary: "list the daemon's sessions", details: """
                    One row per session: the login name it belongs to, the screen it is on (list, user,
                    history), whether it holds unsaved changes (DRAFT, kept while no terminal is attached),
                    its terminals, how long it has been idle, its access, key and id; sorted by login
                    name, then the most recently active first. For root and the admin group. With --json:
                    the daemon's array of objects (id, uid, user, key, clients, screens, screen,
                    user_open, draft, idle_seconds, read_only).
                    """),
        CommandSpec(name: "tui", positionals: [], options: [], summary: "the interactive screen (the default)",
                    details: """
                    List keys: j/k or arrows move, PgDn/Space and PgUp a screen, g/Home the first user, G/End the
                    last user of the whole list (read at once; the rows above load as you go up), Enter opens,
                    h opens the history of the user under the cursor, / searches (Esc clears the search), \
                    r refreshes, x or Esc dismisses a message, ? or F1 help, q quits.
                    a adds a user; d removes the user under the cursor after asking (y removes).
                    User screen: Tab and Shift-Tab move between name, email and avatar URL; every key that
                    types goes into that field (pastes too, whole); Ctrl-K keeps mine, Ctrl-T takes theirs in
                    a conflict with someone else's save; Ctrl-R creates a removed user again; Backspace, Ctrl-W
                    (word) and Ctrl-U (all) delete; Enter or Ctrl-S saves; Esc dismisses a message or goes back,
                    asking first when there are unsaved changes (s save, d discard, k keep editing); F1 help.
                    The user screen says who changed the user last and when; h opens the user's history while
                    the name is unchanged (once changed, h types; Ctrl-O opens it either way)
                    (newest first: j/k move, u undoes the selected change, r reads it again, Esc goes back).
                    Who else has the user open (on this daemon, or any daemon sharing its PostgreSQL database)
                    shows under its fields, by name ("bob is editing this user", "alice also has this user
                    open"), live; never their unsaved text. A ● after a name in the list marks a user someone
                    else has open.
                    The mouse wheel scrolls and a click selects, unless --no-mouse.
                    Every screen's title line names the daemon it is on: "system daemon", "private daemon pid
                    N, SOCKET" (the one userctl starts) or "daemon pid N, SOCKET" (--socket, $USERLISTD_SOCKET);
                    on a narrow screen the socket's end, or the pid alone.
                    [stale] in the list's title: users changed elsewhere since the list was read; rows not
                    loaded yet may have moved. r, g, or coming back from a user's screen reads it again.
                    q (on the list) ends the session. Ctrl-C leaves as closing the terminal does: the daemon
                    keeps the session (screens and unsaved name) for a while, and userctl in the same
                    terminal, or with the same --session, comes back to them.
                    """),
        CommandSpec(name: "help", positionals: [], optionalPositionals: ["COMMAND"], options: [],
                    summary: "describe userctl or one command",
                    details: "The same text as 'userctl --help' and 'userctl COMMAND --help'."),
        CommandSpec(name: "completion", positionals: ["SHELL"], options: [], summary: "print a shell completion script",
                    details: """
                    SHELL is bash, zsh or fish. To use it:
                      bash:  source <(userctl completion bash)      \
                    (or save it in ~/.local/share/bash-completion/completions/userctl)
                      zsh:   userctl completion zsh > "${fpath[1]}/_userctl"
                      fish:  userctl completion fish > ~/.config/fish/completions/userctl.fish
                    'make install' installs the bash and zsh scripts where Debian's shells look.
                    """),
    ]

    /// How a command's ID argument may be given.
    static let idDetails = "ID is the user's whole id, a unique start of it (hex digits; case and hyphens do not "
        + "matter),\n"
        + "or the user's email; a start that several users share exits 65 and lists them."

    /// Commands that need no daemon.
    static let offline: Set<String> = ["help", "completion"]

    static let version = "0.1.0"

    static var main: String {
        var text = """
        userctl: browse and edit the users served by userlistd

        usage: userctl [global options] [COMMAND] [options] [ARGS]
               userctl              (no command) starts the interactive screen

        commands:

        """
        for command in commands {
            let also = command.aliases.isEmpty ? "" : " (also: \(command.aliases.joined(separator: ", ")))"
            text += "  " + command.name.padding(toLength: 12, withPad: " ", startingAt: 0) + command.summary + also
                + "\n"
        }
        text += "\nglobal options:\n"
        text += options(Arguments.globals)
        text += """

        finding the daemon (the first that applies):

        """
        text += DaemonLocator.discoveryText.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n")
        text += """


        sessions: in a terminal the default key is per terminal ($TMUX_PANE, else the tty name), so
        userctl returns to the same screens and drafts; without a terminal each run gets a fresh
        random key, so scripts never share drafts. Two terminals with the same --session KEY mirror
        each other.

        exit status (sysexits):
          0   ok
          64  usage error (unknown command or option, missing value)
          65  data error (validation failed, email already used, unknown or ambiguous id, malformed input)
          66  no input (the import file is missing)
          69  unavailable (daemon not reachable, or its store is down)
          70  internal software error
          74  output error (stdout refused a write: a full disk); what was written is incomplete
          75  temporary failure (conflict: someone saved first; timeout) - try again
          77  permission denied (read-only session, forbidden)
          130 interrupted (Ctrl-C during import, export or list --all; what was done is said)
          141 the reader of stdout went away (as SIGPIPE would end it: userctl ... | head)

        errors: a line on stderr, "userctl: " and what went wrong in plain words; with --json one
        JSON object on stderr instead, {"error": {"code": C, "status": S, "message": M}}: S the exit
        status, C the daemon's error code when it refused (read_only, conflict, validation,
        forbidden, ...) or else usage, invalid_data, no_input, unavailable, internal, output_error,
        try_again, permission_denied, interrupted. A read-only session, or a socket closed to you,
        names the group that lets you in and how to join it (usermod -aG GROUP YOU).

        Colour is used only when stdout is a terminal and NO_COLOR is unset. Control and bidi
        characters in names are shown as escapes (\\x1b, \\u202e); with --json as \\u001b, \\u202e.
        'userctl help COMMAND' (or 'userctl COMMAND --help') describes one command; man userctl.

        """
        return text
    }

    static func command(_ spec: CommandSpec) -> String {
        var text = "usage: \(spec.usage)\n\n\(spec.summary).\n\(spec.details)\n"
        if !spec.options.isEmpty {
            text += "\noptions:\n" + options(spec.options)
        }
        if !spec.aliases.isEmpty {
            text += "\nAlso spelled: \(spec.aliases.map { "userctl \($0)" }.joined(separator: ", ")).\n"
        }
        // The global options are the same for every command: named here, described once in --help.
        text += "\nGlobal options (" + Arguments.globals.map { option in
            "--\(option.name)" + (option.short.map { " (-\($0))" } ?? "")
        }.joined(separator: ", ") + ") and exit status: see 'userctl --help'.\n"
        return text
    }

    /// One line per option, the texts in one column: 20 wide, or wider so that the longest
    /// option still has two spaces before its text (the man page finds the text by them).
    private static func options(_ options: [OptionSpec]) -> String {
        let left = { (option: OptionSpec) in (option.short.map { "-\($0), " } ?? "") + option.spelled }
        let width = max(20, (options.map { left($0).count }.max() ?? 0) + 2)
        return options.map { option in
            "  " + left(option).padding(toLength: width, withPad: " ", startingAt: 0) + option.help + "\n"
        }.joined()
    }
}
