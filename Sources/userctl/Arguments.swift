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
        OptionSpec(name: "socket", value: "PATH", help: "talk to the daemon at PATH (else $USERLISTD_SOCKET, the system socket, the per-user socket)"),
        OptionSpec(name: "session", value: "KEY", help: "attach to session KEY (two terminals with the same key mirror each other)"),
        OptionSpec(name: "json", value: nil, help: "machine-readable output; errors as one JSON object on stderr",
                   short: "j"),
        OptionSpec(name: "no-spawn", value: nil, help: "do not start a per-user userlistd when none answers"),
        OptionSpec(name: "no-mouse", value: nil, help: "the interactive screen leaves the mouse to the terminal"),
        OptionSpec(name: "help", value: nil, help: "show help (also: userctl help [COMMAND])"),
        OptionSpec(name: "version", value: nil, help: "print userctl's version"),
    ]

    static func parse(_ arguments: [String], commands: [CommandSpec]) throws(UsageError) -> Invocation {
        var invocation = Invocation()
        var spec: CommandSpec?
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            var argument = arguments[index]
            index += 1
            if !onlyPositionals && argument == "--" { onlyPositionals = true; continue }
            if !onlyPositionals && (argument == "-h") { invocation.help = true; continue }
            // `-n 20`, `-n20`, `-j`: a one-letter option is its long form under another name.
            if !onlyPositionals, argument.count >= 2, argument.hasPrefix("-"), !argument.hasPrefix("--"),
               !(argument.dropFirst().first?.isNumber ?? false) {
                let letter = argument.dropFirst().first!
                let known = globals + (spec?.options ?? [])
                guard let option = known.first(where: { $0.short == letter }) else {
                    let shorts = known.compactMap { $0.short.map { "-\($0)" } }.joined(separator: ", ")
                    let listed = shorts.isEmpty ? "" : " (one-letter options: \(shorts))"
                    throw UsageError(message: "unknown option '\(argument)'\(listed); long options are spelled "
                                     + "with two dashes, e.g. --json", command: spec?.name)
                }
                let rest = argument.dropFirst(2)
                if !rest.isEmpty && option.value == nil {
                    throw UsageError(message: "option '-\(letter)' takes no value (write one-letter options apart: "
                                     + "-j -n 5)", command: spec?.name)
                }
                argument = "--\(option.name)" + (rest.isEmpty ? "" : "=" + rest)
            }
            if !onlyPositionals && argument.hasPrefix("--") {
                var name = String(argument.dropFirst(2))
                var inlineValue: String?
                if let equals = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
                let known = globals + (spec?.options ?? [])
                guard let option = known.first(where: { $0.name == name }) else {
                    let scope = spec.map { " for 'userctl \($0.name)'" } ?? ""
                    var message = "unknown option '--\(name)'\(scope)"
                    if let guess = Suggestions.closest(to: name, among: known.map(\.name)) {
                        message += "; did you mean '--\(guess)'?"
                    } else if spec == nil, let other = commands.first(where: { $0.options.contains { $0.name == name } }) {
                        message += "; it is an option of 'userctl \(other.name)', after the command"
                    }
                    throw UsageError(message: message, command: spec?.name)
                }
                if let placeholder = option.value {
                    let value: String
                    if let inlineValue {
                        value = inlineValue
                    } else {
                        guard index < arguments.count, !(arguments[index].hasPrefix("--") && arguments[index].count > 2) else {
                            throw UsageError(message: "option '--\(name)' needs a value (\(placeholder))", command: spec?.name)
                        }
                        value = arguments[index]
                        index += 1
                    }
                    invocation.values[name] = value
                } else {
                    guard inlineValue == nil else {
                        throw UsageError(message: "option '--\(name)' takes no value", command: spec?.name)
                    }
                    switch name {
                    case "help": invocation.help = true
                    case "version": invocation.version = true
                    default: invocation.flags.insert(name)
                    }
                }
                continue
            }
            if spec == nil {
                guard let found = commands.first(where: { $0.isNamed(argument) }) else {
                    let names = commands.flatMap { [$0.name] + $0.aliases }
                    let guess = Suggestions.closest(to: argument, among: names).map { "; did you mean '\($0)'?" }
                        ?? "; commands: \(commands.map(\.name).joined(separator: ", "))"
                    throw UsageError(message: "unknown command '\(argument)'\(guess)", command: nil)
                }
                spec = found
                invocation.command = found.name
                continue
            }
            invocation.positionals.append(argument)
        }
        if let spec, !invocation.help {
            if let missing = spec.options.first(where: { $0.required && invocation.values[$0.name] == nil }) {
                throw UsageError(message: "'userctl \(spec.name)' needs \(missing.spelled)", command: spec.name)
            }
            if invocation.positionals.count < spec.positionals.count {
                let missing = spec.positionals[invocation.positionals.count...].joined(separator: " ")
                throw UsageError(message: "'userctl \(spec.name)' needs \(missing)", command: spec.name)
            }
            let allowed = spec.positionals + spec.optionalPositionals
            if invocation.positionals.count > allowed.count {
                throw UsageError(message: "'userctl \(spec.name)' takes \(allowed.isEmpty ? "no arguments" : allowed.joined(separator: " ")); unexpected '\(invocation.positionals[allowed.count])'", command: spec.name)
            }
        }
        return invocation
    }

    /// An option's value as a positive integer, or a usage error naming it.
    static func positiveInt(_ invocation: Invocation, _ name: String) throws(UsageError) -> Int? {
        guard let text = invocation.values[name] else { return nil }
        guard let value = Int(text), value > 0 else {
            throw UsageError(message: "option '--\(name)' needs a positive whole number, not '\(text)'", command: invocation.command)
        }
        return value
    }
}
