import Foundation
import Glibc
import UserListClient
import UserListWire

/// `userctl __complete-users WORD [--socket PATH]`: the ids and emails that start with WORD,
/// one a line, for the shell completion scripts (`Completion`). Never starts a daemon, never
/// prints an error: when no daemon answers (or anything fails) it prints nothing, so a Tab
/// press stays quiet. Not listed in help: only the scripts call it.
enum CompletionCandidates {
    static let command = "__complete-users"
    /// Candidates of each kind at most: a shell shows a screenful anyway.
    static let limit = 50

    static func run(_ arguments: [String]) async -> Never {
        let word = arguments.first { !$0.hasPrefix("--") } ?? ""
        let socket = arguments.firstIndex(of: "--socket").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        guard let path = try? DaemonLocator().locate(explicit: socket, spawn: false) else { exit(0) }
        let key = "userctl-complete-\(UInt32.random(in: 0...UInt32.max))"
        var configuration = ClientConfiguration(socketPath: path, sessionKey: key, clientName: "userctl",
                                                clientBuild: "0.1")
        configuration.reconnect = .never
        configuration.handshakeTimeout = .seconds(2)
        configuration.replyTimeout = .seconds(2)
        let client = UserListClient(configuration: configuration)
        guard (try? client.connect()) != nil else { exit(0) }
        let lines = await candidates(for: word, client)
        client.close()
        for line in lines { Console.out(line) }
        exit(0)
    }

    /// Ids starting with `word` (when it can start an id) and emails starting with it.
    static func candidates(for word: String, _ client: UserListClient) async -> [String] {
        var found: [String] = []
        let hex = word.filter { $0 != "-" }
        if !hex.isEmpty, hex.count <= 32, hex.allSatisfy({ $0.isHexDigit && $0.isASCII }) {
            let result = try? await client.send(screen: "session", action: "find_users",
                                                args: ["id_prefix": .string(word), "limit": .int(Int64(limit))])
            found += (result?["users"]?.arrayValue ?? []).compactMap(UserRow.init).map(\.id)
        }
        var args: [String: JSONValue] = ["limit": .int(Int64(limit))]
        if !word.isEmpty { args["search"] = .string(word) }
        let page = try? await client.send(screen: "session", action: "export_page", args: args)
        let users = (page?["users"]?.arrayValue ?? []).compactMap(UserRow.init)
        found += users.map(\.email).filter { $0.lowercased().hasPrefix(word.lowercased()) }
        if word.isEmpty { found += users.map(\.id) }
        // A shell word cannot hold a control character safely: such a value is not offered.
        return found.filter { !TerminalText.needsEscaping($0) && !$0.contains(" ") }
    }
}
