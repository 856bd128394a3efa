/// One pass over the command line (`Arguments.parse`): each word is a one-letter option, a long
/// option, the command, or a positional, and each kind has its own step below, so that every
/// mistake is caught where that kind of word is read.
struct ArgumentParser {
    let arguments: [String]
    let commands: [CommandSpec]
    private var invocation = Invocation()
    private var spec: CommandSpec?
    private var index = 0

    init(arguments: [String], commands: [CommandSpec]) {
        self.arguments = arguments
        self.commands = commands
    }

    /// The options known where the parser is: the global ones, and the command's once it is read.
    private var known: [OptionSpec] { Arguments.globals + (spec?.options ?? []) }

    mutating func parse() throws(UsageError) -> Invocation {
        var onlyPositionals = false
        while index < arguments.count {
            var argument = arguments[index]
            index += 1
            if onlyPositionals {
                try take(argument)
                continue
            }
            if argument == "--" { onlyPositionals = true; continue }
            if argument == "-h" { invocation.help = true; continue }
            // `-n 20`, `-n20`, `-j`: a one-letter option is its long form under another name.
            if argument.count >= 2, argument.hasPrefix("-"), !argument.hasPrefix("--"),
               !(argument.dropFirst().first?.isNumber ?? false) {
                argument = try longForm(of: argument)
            }
            if argument.hasPrefix("--") {
                try readOption(argument)
            } else {
                try take(argument)
            }
        }
        try checkPositionals()
        return invocation
    }

    /// `-n20` as `--page-size=20`, `-j` as `--json`.
    private func longForm(of argument: String) throws(UsageError) -> String {
        let letter = argument.dropFirst().first!
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
        return "--\(option.name)" + (rest.isEmpty ? "" : "=" + rest)
    }

    /// `--name`, `--name=value` or `--name value`.
    private mutating func readOption(_ argument: String) throws(UsageError) {
        var name = String(argument.dropFirst(2))
        var inlineValue: String?
        if let equals = name.firstIndex(of: "=") {
            inlineValue = String(name[name.index(after: equals)...])
            name = String(name[..<equals])
        }
        guard let option = known.first(where: { $0.name == name }) else { throw unknownOption(name) }
        if let placeholder = option.value {
            if let inlineValue {
                invocation.values[name] = inlineValue
            } else {
                invocation.values[name] = try nextValue(of: name, placeholder: placeholder)
            }
            return
        }
        guard inlineValue == nil else {
            throw UsageError(message: "option '--\(name)' takes no value", command: spec?.name)
        }
        switch name {
        case "help": invocation.help = true
        case "version": invocation.version = true
        default: invocation.flags.insert(name)
        }
    }

    /// The word after `--name` as its value: any word but another long option.
    private mutating func nextValue(of name: String, placeholder: String) throws(UsageError) -> String {
        guard index < arguments.count, !(arguments[index].hasPrefix("--") && arguments[index].count > 2) else {
            throw UsageError(message: "option '--\(name)' needs a value (\(placeholder))", command: spec?.name)
        }
        index += 1
        return arguments[index - 1]
    }

    /// What an unknown `--name` may have meant: a near spelling, or a command's option given
    /// before the command.
    private func unknownOption(_ name: String) -> UsageError {
        let scope = spec.map { " for 'userctl \($0.name)'" } ?? ""
        var message = "unknown option '--\(name)'\(scope)"
        if let guess = Suggestions.closest(to: name, among: known.map(\.name)) {
            message += "; did you mean '--\(guess)'?"
        } else if spec == nil, let other = commands.first(where: { $0.options.contains { $0.name == name } }) {
            message += "; it is an option of 'userctl \(other.name)', after the command"
        }
        return UsageError(message: message, command: spec?.name)
    }

    /// The first plain word is the command; the others are its positionals.
    private mutating func take(_ argument: String) throws(UsageError) {
        guard spec == nil else {
            invocation.positionals.append(argument)
            return
        }
        guard let found = commands.first(where: { $0.isNamed(argument) }) else {
            let names = commands.flatMap { [$0.name] + $0.aliases }
            let guess = Suggestions.closest(to: argument, among: names).map { "; did you mean '\($0)'?" }
                ?? "; commands: \(commands.map(\.name).joined(separator: ", "))"
            throw UsageError(message: "unknown command '\(argument)'\(guess)", command: nil)
        }
        spec = found
        invocation.command = found.name
    }

    /// The command's required options and positionals are there, and no more positionals than
    /// it takes (not checked for `--help`, which needs none of them).
    private func checkPositionals() throws(UsageError) {
        guard let spec, !invocation.help else { return }
        if let missing = spec.options.first(where: { $0.required && invocation.values[$0.name] == nil }) {
            throw UsageError(message: "'userctl \(spec.name)' needs \(missing.spelled)", command: spec.name)
        }
        if invocation.positionals.count < spec.positionals.count {
            let missing = spec.positionals[invocation.positionals.count...].joined(separator: " ")
            throw UsageError(message: "'userctl \(spec.name)' needs \(missing)", command: spec.name)
        }
        let allowed = spec.positionals + spec.optionalPositionals
        if invocation.positionals.count > allowed.count {
            let takes = allowed.isEmpty ? "no arguments" : allowed.joined(separator: " ")
            throw UsageError(message: "'userctl \(spec.name)' takes \(takes); unexpected "
                             + "'\(invocation.positionals[allowed.count])'", command: spec.name)
        }
    }
}
