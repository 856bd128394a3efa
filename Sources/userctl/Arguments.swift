/// The command line, parsed by hand: global flags anywhere, one command, its options and its
/// positional arguments. Every mistake becomes a `UsageError` that says what was wrong and where
/// to look, and exits 64.
struct UsageError: Error, Equatable {
    let message: String
    /// The command whose help to point at, if known.
    let command: String?
}

struct OptionSpec: Sendable {
    let name: String
    /// `nil` for a flag; otherwise the value's placeholder in help ("N", "TEXT").
    let value: String?
    let help: String
    /// A one-letter spelling (`-n` for `--page-size`), as scripts and fingers expect.
    var short: Character? = nil
    /// The command cannot run without it: its usage line shows it without brackets.
    var required = false

    /// "--page-size N", as usage lines write it.
    var spelled: String { "--\(name)" + (value.map { " " + $0 } ?? "") }
}

struct CommandSpec: Sendable {
    let name: String
    /// Other names for the command (`ls` for `list`), listed in help.
    var aliases: [String] = []
    let positionals: [String]
    /// Positionals that may be left out (after the required ones), e.g. `help [COMMAND]`.
    var optionalPositionals: [String] = []
    let options: [OptionSpec]
    let summary: String
    let details: String

    var usage: String {
        var parts = ["userctl", name]
        parts += options.filter(\.required).map(\.spelled)
        parts += options.filter { !$0.required }.map { "[\($0.spelled)]" }
        parts += positionals
        parts += optionalPositionals.map { "[\($0)]" }
        return parts.joined(separator: " ")
    }

    /// Whether `word` names this command (its name or an alias).
    func isNamed(_ word: String) -> Bool { name == word || aliases.contains(word) }
}

struct Invocation: Equatable {
    var command: String?
    var values: [String: String] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []
    var help = false
    var version = false

    var json: Bool { flags.contains("json") }
}

enum Arguments {
    static let globals: [OptionSpec] = [
        OptionSpec(name: "socket", value: "PATH",
                   help: "talk to the daemon at PATH (else $USERLISTD_SOCKET, the system socket, the per-user socket)"),
        OptionSpec(name: "session", value: "KEY",
                   help: "attach to session KEY (two terminals with the same key mirror each other)"),
        OptionSpec(name: "json", value: nil, help: "machine-readable output; errors as one JSON object on stderr",
                   short: "j"),
        OptionSpec(name: "no-spawn", value: nil, help: "do not start a per-user userlistd when none answers"),
        OptionSpec(name: "no-mouse", value: nil, help: "the interactive screen leaves the mouse to the terminal"),
        OptionSpec(name: "help", value: nil, help: "show help (also: userctl help [COMMAND])"),
        OptionSpec(name: "version", value: nil, help: "print userctl's version"),
    ]

    static func parse(_ arguments: [String], commands: [CommandSpec]) throws(UsageError) -> Invocation {
        var parser = ArgumentParser(arguments: arguments, commands: commands)
        return try parser.parse()
    }

    /// An option's value as a positive integer, or a usage error naming it.
    static func positiveInt(_ invocation: Invocation, _ name: String) throws(UsageError) -> Int? {
        guard let text = invocation.values[name] else { return nil }
        guard let value = Int(text), value > 0 else {
            throw UsageError(message: "option '--\(name)' needs a positive whole number, not '\(text)'",
                             command: invocation.command)
        }
        return value
    }
}
