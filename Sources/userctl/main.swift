import Synchronization
import Foundation
import Glibc
import UserListClient

// The composition root: parse, find (or start) the daemon, connect, run one command or the TUI.

signal(SIGPIPE, SIG_IGN)

/// Whether errors are JSON: `--json` anywhere before `--`, even on a command line that does not parse.
let errorsAsJSON = CommandLine.arguments.dropFirst().prefix { $0 != "--" }.contains { $0 == "--json" || $0 == "-j" }

func fail(_ code: ExitCode, _ message: String) -> Never {
    fail(CommandFailure(code, message))
}

/// The failure on stderr ("userctl: …", or with `--json` one JSON object), then its exit status.
func fail(_ failure: CommandFailure) -> Never {
    if errorsAsJSON { Console.errJSON(failure.json) } else { Console.err("userctl: \(failure.message)") }
    exit(failure.code.rawValue)
}

// The completion scripts' helper: quiet, no daemon started (see `CompletionCandidates`).
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == CompletionCandidates.command {
    await CompletionCandidates.run(Array(CommandLine.arguments.dropFirst(2)))
}

let invocation: Invocation
do {
    invocation = try Arguments.parse(Array(CommandLine.arguments.dropFirst()), commands: Help.commands)
} catch {
    let hint = error.command.map { "userctl \($0) --help" } ?? "userctl --help"
    fail(.usage, "\(error.message)\n(see '\(hint)')")
}

Console.jsonOutput.store(invocation.json, ordering: .relaxed)

if invocation.version {
    print("userctl \(Help.version)")
    exit(ExitCode.ok.rawValue)
}

// Help and completion need no daemon.
if invocation.help || invocation.command == "help" {
    // `userctl help rename`, `userctl rename --help` and `userctl help --help` all work.
    let topic = invocation.command == "help" ? invocation.positionals.first : invocation.command
    if let topic {
        guard let spec = Help.commands.first(where: { $0.isNamed(topic) }) else {
            let names = Help.commands.flatMap { [$0.name] + $0.aliases }
            let guess = Suggestions.closest(to: topic, among: names).map { "; did you mean '\($0)'?" } ?? ""
            fail(.usage, "no help for '\(topic)': it is not a command\(guess)\n(see 'userctl --help')")
        }
        print(Help.command(spec), terminator: "")
    } else {
        print(Help.main, terminator: "")
    }
    exit(ExitCode.ok.rawValue)
}
if invocation.command == "completion" {
    let shell = invocation.positionals[0]
    guard let script = Completion.script(for: shell) else {
        fail(.usage, "no completion for '\(shell)'; shells: \(Completion.shells.joined(separator: ", "))")
    }
    print(script, terminator: "")
    exit(ExitCode.ok.rawValue)
}

let command = invocation.command ?? "tui"
let socketPath: String
do {
    socketPath = try DaemonLocator().locate(explicit: invocation.values["socket"],
                                            spawn: !invocation.flags.contains("no-spawn"))
} catch {
    fail(error)
}

var configuration = ClientConfiguration(
    socketPath: socketPath, sessionKey: invocation.values["session"] ?? SessionKeys.defaultKey(),
    clientName: "userctl", clientBuild: "0.1")
if command == "tui" {
    let size = Terminal.size()
    configuration.terminal = (size.columns, size.rows)
} else if command != "watch" {
    configuration.reconnect = .never  // a one-shot command reports a dropped daemon instead of waiting
}
let client = UserListClient(configuration: configuration)
do {
    try client.connect()
} catch {
    fail(CommandFailure(error))
}

if command == "tui" {
    let status = await TUI(client: client, mouse: !invocation.flags.contains("no-mouse")).run()
    client.close()
    exit(status.rawValue)
}

do {
    let style = Style.detect(json: invocation.json)
    try await Commands.run(CommandContext(invocation: invocation, client: client, style: style))
    client.close()
    exit(ExitCode.ok.rawValue)
} catch {
    client.close()
    fail(error)
}
