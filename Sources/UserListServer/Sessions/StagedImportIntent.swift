import Foundation
import UserListDomain
import UserListWire

/// The intents of an all-or-nothing import (PROTOCOL.md §4.3): `import_begin`, then the file's
/// chunks as `import_users` naming the import and the position of their first entry, then
/// `import_commit` (or `import_abort`). Nothing is visible to anyone before the commit.
enum StagedImportIntent: Equatable {
    case begin
    case stage(ImportToken, [ImportEntry])
    /// `source`: the file's name as the person gave it, for the history.
    case commit(ImportToken, source: String?)
    case abort(ImportToken)

    /// Decodes the staged actions; nil for an `import_users` without `import` (a chunk applied
    /// on its own, as before).
    init?(_ action: String, _ args: IntentArguments) throws(IntentError) {
        switch action {
        case "import_begin": self = .begin
        case "import_commit": self = .commit(try args.importToken(), source: try args.optionalString("source"))
        case "import_abort": self = .abort(try args.importToken())
        case "import_users":
            guard args.values["import"] != nil else { return nil }
            let first = try args.int("first")
            guard first >= 1 else {
                throw IntentError(.invalidArgs,
                                  "'first' must be the position of the chunk's first entry in the file (1 or more).")
            }
            self = .stage(try args.importToken(), try args.importEntries("users", first: first))
        default: return nil
        }
    }
}

extension IntentArguments {
    func importToken() throws(IntentError) -> ImportToken {
        ImportToken(try string("import"))
    }

    /// Users in the wire shape, as entries `first`, `first + 1`...: `version`, when given, is
    /// the version the entry was made from (a conflict if the store's is newer).
    func importEntries(_ name: String, first: Int) throws(IntentError) -> [ImportEntry] {
        guard let array = values[name]?.arrayValue else {
            throw IntentError(.invalidArgs, "'\(name)' must be an array of users.")
        }
        var entries: [ImportEntry] = []
        entries.reserveCapacity(array.count)
        for (index, item) in array.enumerated() {
            let fields = IntentArguments(item.objectValue ?? [:])
            do throws(IntentError) {
                let version = try fields.optionalInt("version")
                if let version, version < 1 { throw IntentError(.invalidArgs, "'version' must be 1 or more.") }
                let user = User(id: try fields.uuid("id"), name: try fields.string("name"),
                                email: try fields.string("email"),
                                avatarURL: try fields.optionalString("avatar_url"), version: version ?? 1)
                entries.append(ImportEntry(position: first + index, user: user, expectedVersion: version))
            } catch {
                throw IntentError(.invalidArgs, "entry \(first + index) of the file: \(error.message)")
            }
        }
        return entries
    }
}
