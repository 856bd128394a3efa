import Foundation
import UserListDomain
import UserListPresentation
import UserListWire

/// The users an import's undo could not undo (why it was refused, or whom a forced undo left
/// alone), in a person's words: each user changed since the import by name, with who changed it
/// last, what and when (from the history), instead of bare ids.
enum ImportUndoStory {
    /// "“Ada King” (6f1d2c3b): bob changed the name to “Ada King” 2 min ago" for each of `ids`;
    /// a user removed since is told by its id and its removal.
    static func changes(of ids: [UUID], _ useCases: UserUseCases, now: Date = Date()) async -> [String] {
        var told: [String] = []
        for id in ids {
            let short = UUIDText.lowercase(id).prefix(8)
            let stored = try? await useCases.fetchUser.execute(id: id)
            let name = stored.map { "“\($0.name)” (\(short))" } ?? "\(short)"
            let last = try? await useCases.history?.user(id, limit: 1).entries.first
            told.append(last.map { "\(name): \(ConflictStory.describe($0, now: now))" } ?? name)
        }
        return told
    }

    /// How many of the users a forced undo left as they are it tells by name (`skipped_told`).
    static let toldSkipped = 10

    /// A forced undo's reply, with the first of the users it left as they are (`ids`) told as a
    /// refusal tells them (`skipped_told`), beside their ids (`skipped`).
    static func tellingSkipped(_ ids: [UUID], in result: Result<JSONValue?, IntentError>,
                               _ useCases: UserUseCases) async -> Result<JSONValue?, IntentError> {
        guard !ids.isEmpty, case .success(.object(var reply)) = result else { return result }
        let told = await changes(of: Array(ids.prefix(toldSkipped)), useCases)
        reply["skipped_told"] = .array(told.map(JSONValue.string))
        return .success(.object(reply))
    }
}
