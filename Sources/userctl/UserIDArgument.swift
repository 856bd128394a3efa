import Foundation
import UserListClient
import UserListWire

/// A user named on the command line by the whole id or, as git and docker take commits and
/// containers, by a unique start of it (`userctl show 4f1c`). The daemon's `find_users` looks
/// the prefix up in its store; when several users match, the error lists them.
enum UserIDArgument {
    /// Candidates listed for an ambiguous prefix.
    static let shownCandidates = 10
    /// The shortest start of an id a destructive command (`remove`) takes: one or two characters
    /// match a user today and another after the next import. git asks for 4 as well.
    static let destructiveMinimum = 4

    /// The whole id of the user `text` names: a whole id, the start of one (at least
    /// `minimumPrefix` characters), or an email.
    static func resolve(_ text: String, _ client: UserListClient, minimumPrefix: Int = 1,
                        action: String = "name a user") async throws -> String {
        if let id = UUID(uuidString: text) { return id.uuidString.lowercased() }
        if text.contains("@") { return try await byEmail(text, client) }
        let digits = text.filter { $0 != "-" }
        guard !digits.isEmpty, digits.count <= 32, digits.allSatisfy({ $0.isHexDigit && $0.isASCII }) else {
            throw CommandFailure(.dataError, "'\(text)' is not a user id or an email: ids are hex digits "
                                 + "(like 4f1c2a9e-…), "
                                 + "and the start of one names the user")
        }
        guard digits.count >= minimumPrefix else {
            throw CommandFailure(.usage, "'\(text)' is too short a start of an id to \(action): give at least "
                                 + "\(minimumPrefix) characters of the id, the whole id, or the user's email")
        }
        let result: JSONValue?
        do {
            let args: [String: JSONValue] = ["id_prefix": .string(text), "limit": .int(Int64(shownCandidates + 1))]
            result = try await client.send(screen: "session", action: "find_users", args: args)
        } catch let error as ClientError where error.serverCode == .unknownAction {
            throw CommandFailure(.dataError,
                                 "this userlistd cannot look users up by the start of their id; give the whole id")
        }
        let users = (result?["users"]?.arrayValue ?? []).compactMap(UserRow.init)
        switch users.count {
        case 0:
            throw CommandFailure(.dataError, "no user has an id starting with \(text)")
        case 1:
            return users[0].id
        default:
            let count = users.count > shownCandidates ? "more than \(shownCandidates)" : "\(users.count)"
            let lines = users.prefix(shownCandidates).map {
                "  \($0.id)  \(DisplayWidth.sanitized($0.name))  <\(DisplayWidth.sanitized($0.email))>"
            }
            throw CommandFailure(.dataError, "'\(text)' starts the ids of \(count) users; give more of the id:\n"
                                 + lines.joined(separator: "\n"))
        }
    }

    /// The id of the user whose email is `email` (emails are unique; case does not matter),
    /// found with the store's search, which matches it among a few at most.
    static func byEmail(_ email: String, _ client: UserListClient) async throws -> String {
        let page = try await client.send(screen: "session", action: "export_page",
                                         args: ["search": .string(email), "limit": .int(100)])
        let wanted = email.lowercased()
        let users = (page?["users"]?.arrayValue ?? []).compactMap(UserRow.init)
        guard let user = users.first(where: { $0.email.lowercased() == wanted }) else {
            throw CommandFailure(.dataError, "no user has the email \(DisplayWidth.sanitized(email))")
        }
        return user.id
    }
}
