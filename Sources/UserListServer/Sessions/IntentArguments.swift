import Foundation
import UserListDomain
import UserListWire

/// A rejected intent: the error code and a message for the person.
struct IntentError: Error {
    let code: ErrorCode
    let message: String
    /// The daemon keeps what was asked and finishes it itself (`UserError.importKept`).
    var kept = false
    init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// Typed access to an intent's `args`, failing with `invalid_args` and the field's name.
struct IntentArguments {
    let values: [String: JSONValue]
    init(_ values: [String: JSONValue]) { self.values = values }

    func string(_ name: String) throws(IntentError) -> String {
        guard let value = values[name]?.stringValue else {
            throw IntentError(.invalidArgs, "'\(name)' must be a string.")
        }
        return value
    }

    func optionalString(_ name: String) throws(IntentError) -> String? {
        switch values[name] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw IntentError(.invalidArgs, "'\(name)' must be a string or null.")
        }
    }

    func int(_ name: String) throws(IntentError) -> Int {
        guard let value = values[name]?.int64Value, let int = Int(exactly: value) else {
            throw IntentError(.invalidArgs, "'\(name)' must be a whole number.")
        }
        return int
    }

    func optionalInt(_ name: String) throws(IntentError) -> Int? {
        switch values[name] {
        case nil, .null?: return nil
        default: return try int(name)
        }
    }

    /// `name`, `email` and an optional `avatar_url`: a user to add.
    func newUser() throws(IntentError) -> NewUser {
        NewUser(name: try string("name"), email: try string("email"), avatarURL: try optionalString("avatar_url"))
    }

    /// A field's wire name (`name`, `email`, `avatar_url`).
    func field(_ name: String) throws(IntentError) -> UserField {
        switch values[name]?.stringValue {
        case "name"?: return .name
        case "email"?: return .email
        case "avatar_url"?: return .avatarURL
        default: throw IntentError(.invalidArgs, "'\(name)' must be one of \"name\", \"email\" or \"avatar_url\".")
        }
    }

    /// The fields `set_user` changes: each one given, the rest left as stored. `avatar_url`
    /// null removes the avatar; absent leaves it.
    func userEdit() throws(IntentError) -> UserEdit {
        var edit = UserEdit()
        edit.name = try optionalString("name")
        edit.email = try optionalString("email")
        if let avatar = values["avatar_url"] {
            guard avatar == .null || avatar.stringValue != nil else {
                throw IntentError(.invalidArgs, "'avatar_url' must be a string, or null to remove the avatar.")
            }
            edit.avatarURL = .some(avatar.stringValue)
        }
        guard edit.name != nil || edit.email != nil || edit.avatarURL != nil else {
            throw IntentError(.invalidArgs, "Give at least one of 'name', 'email' and 'avatar_url' to change.")
        }
        return edit
    }

    /// A draft's fields as typed (`offer_draft`): any of `name`, `email`, `avatar_url` (empty:
    /// no avatar), at least one; not validated, as a draft is not.
    func draftFields() throws(IntentError) -> [UserField: String] {
        var fields: [UserField: String] = [:]
        for (field, key) in [(UserField.name, "name"), (.email, "email"), (.avatarURL, "avatar_url")] {
            if let text = try optionalString(key) { fields[field] = text }
        }
        guard !fields.isEmpty else {
            throw IntentError(.invalidArgs, "Give at least one of 'name', 'email' and 'avatar_url' of the draft.")
        }
        return fields
    }

    func uuid(_ name: String) throws(IntentError) -> UUID {
        // Not `UUID(uuidString:)`: it goes through `sscanf`, a quarter of the daemon's CPU in an import.
        guard let text = values[name]?.stringValue, let id = UUIDText.parse(text) else {
            throw IntentError(.invalidArgs, "'\(name)' must be a user id (a UUID).")
        }
        return id
    }

    /// Users in the wire shape (`id`, `name`, `email`, `avatar_url`, `version`).
    func users(_ name: String) throws(IntentError) -> [User] {
        guard let array = values[name]?.arrayValue else {
            throw IntentError(.invalidArgs, "'\(name)' must be an array of users.")
        }
        var users: [User] = []
        users.reserveCapacity(array.count)
        for (index, item) in array.enumerated() {
            let fields = IntentArguments(item.objectValue ?? [:])
            do throws(IntentError) {
                users.append(User(
                    id: try fields.uuid("id"), name: try fields.string("name"), email: try fields.string("email"),
                    avatarURL: try fields.optionalString("avatar_url"),
                    version: fields.values["version"] == nil ? 1 : try fields.int("version")))
            } catch {
                throw IntentError(.invalidArgs, "\(name)[\(index)]: \(error.message)")
            }
        }
        return users
    }
}

extension IntentError {
    /// A store or validation failure as the reply's error.
    init(_ error: UserError) {
        switch error {
        case .notFound, .noHistoryEntry: self.init(.notFound, error.message)
        case .conflict, .changedSinceImport: self.init(.conflict, error.message)
        // Taken by another user: retrying can never succeed, so it is not a `conflict`.
        case .duplicateEmail, .validation, .rejectedEntry, .alreadyUndone: self.init(.validation, error.message)
        case .unavailable: self.init(.unavailable, error.message)
        case .importKept:
            self.init(.unavailable, error.message)
            kept = true
        case .forbidden: self.init(.forbidden, error.message)
        }
    }
}
