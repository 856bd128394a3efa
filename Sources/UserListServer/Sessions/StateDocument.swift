import Foundation
import UserListDomain
import UserListPresentation
import UserListWire

/// The session state document of Protocol/PROTOCOL.md, built from the navigator's state.
///
/// Written by hand rather than through `JSONEncoder`: it runs after every intent and every
/// completion, and building the `JSONValue` directly skips an encode-then-parse round trip.
package enum StateDocument {
    package static func make(_ state: NavigationState) -> JSONValue {
        .object(["screens": .array(state.screens.map(screen))])
    }

    static func screen(_ screen: NavigationState.ScreenState) -> JSONValue {
        switch screen {
        case .list(let list):
            .object(["id": "list", "kind": "list", "state": self.list(list)])
        case .detail(let detail):
            .object(["id": "detail", "kind": "detail", "state": self.detail(detail)])
        case .history(let history):
            .object(["id": "history", "kind": "history", "state": self.history(history)])
        }
    }

    static func list(_ state: UserListState) -> JSONValue {
        .object([
            "users": .array(state.users.map(user)),
            "loading": .string(state.loading.rawValue),
            "error_message": optional(state.errorMessage),
            "has_more": .bool(state.hasMore),
            "has_previous": .bool(state.hasPrevious),
            "total_count": state.totalCount.map { .int(Int64($0)) } ?? .null,
            "search": optional(state.search),
            "is_stale": .bool(state.isStale),
        ])
    }

    static func detail(_ state: UserDetailState) -> JSONValue {
        .object([
            "user_id": .string(UUIDText.lowercase(state.userID)),
            "user": state.user.map(user) ?? .null,
            "draft_name": .string(state.draftName),
            "draft_email": .string(state.draftEmail),
            "draft_avatar_url": .string(state.draftAvatarURL),
            "dirty_fields": fields(state.dirtyFields),
            "field_errors": fieldErrors(state.fieldErrors),
            "is_dirty": .bool(state.isDirty),
            "can_save": .bool(state.canSave),
            "is_saving": .bool(state.isSaving),
            "is_new": .bool(state.isNew),
            "read_only": .bool(state.isReadOnly),
            "error_message": optional(state.errorMessage),
            "conflicts": conflicts(state.conflicts),
            "followed": followed(state.followed),
            "removal": state.removal.map(removal) ?? .null,
        ])
    }

    /// A field's wire name: `name`, `email`, `avatar_url`.
    static func fieldName(_ field: UserField) -> String {
        switch field {
        case .name: "name"
        case .email: "email"
        case .avatarURL: "avatar_url"
        }
    }

    static func fields(_ fields: [UserField]) -> JSONValue { .array(fields.map { .string(fieldName($0)) }) }

    static func fieldErrors(_ errors: [UserField: String]) -> JSONValue {
        .object(Dictionary(uniqueKeysWithValues: errors.map { (fieldName($0.key), JSONValue.string($0.value)) }))
    }

    static func conflicts(_ conflicts: [FieldConflict]) -> JSONValue {
        .array(conflicts.map { conflict in
            .object(["field": .string(fieldName(conflict.field)), "theirs": .string(conflict.theirs),
                     "author": optional(conflict.author)])
        })
    }

    static func followed(_ followed: [FollowedChange]) -> JSONValue {
        .array(followed.map { .object(["field": .string(fieldName($0.field)), "author": optional($0.author)]) })
    }

    static func removal(_ removal: Removal) -> JSONValue { .object(["author": optional(removal.author)]) }

    /// A user in the wire's shape (also used by replies, events and exports).
    static func user(_ user: User) -> JSONValue {
        .object([
            "id": .string(UUIDText.lowercase(user.id)),
            "name": .string(user.name),
            "email": .string(user.email),
            "avatar_url": optional(user.avatarURL),
            "version": .int(Int64(user.version)),
        ])
    }

    /// A one-shot save's result; `unchanged`: every field was already stored (no new version,
    /// no history entry), which the reply says so the caller does not claim a change.
    static func saved(_ saved: User, unchanged: Bool) -> JSONValue {
        guard unchanged, case .object(var fields) = user(saved) else { return user(saved) }
        fields["unchanged"] = .bool(true)
        return .object(fields)
    }

    /// `user(user)`'s bytes, written without building it: keys in the serializer's sorted order.
    static func write(_ user: User, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"avatar_url":"#.utf8)
        if let avatar = user.avatarURL {
            JSONWriter.writeString(avatar, into: &out)
        } else {
            out.append(contentsOf: "null".utf8)
        }
        out.append(contentsOf: #","email":"#.utf8)
        JSONWriter.writeString(user.email, into: &out)
        out.append(contentsOf: #","id":""#.utf8)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: UUIDText.count) { text in
            UUIDText.write(user.id, uppercase: false, into: text)
            out.append(contentsOf: UnsafeBufferPointer(text))
        }
        out.append(contentsOf: #"","name":"#.utf8)
        JSONWriter.writeString(user.name, into: &out)
        out.append(contentsOf: #","version":"#.utf8)
        JSONWriter.writeInt(Int64(user.version), into: &out)
        out.append(UInt8(ascii: "}"))
    }

    static func optional(_ text: String?) -> JSONValue {
        text.map(JSONValue.string) ?? .null
    }
}
