import Foundation
import UserListDomain
import UserListPresentation
import UserListWire

/// The history screen and history entries in the wire's shape (PROTOCOL.md §3.4), shared by the
/// state document, the `history` reply and the `did_revert` event.
extension StateDocument {
    static func history(_ state: UserHistoryState) -> JSONValue {
        .object([
            "user_id": .string(UUIDText.lowercase(state.userID)),
            "entries": .array(state.entries.map(entry)),
            "loading": .string(state.loading.wireName),
            "has_more": .bool(state.hasMore),
            "error_message": state.errorMessage.map(JSONValue.string) ?? .null,
            "reverting": state.reverting.map { .int($0) } ?? .null,
        ])
    }

    /// One entry: `entry` is the number `revert` takes; `at` is RFC 3339 in UTC (milliseconds).
    /// A whole import has no `user_id` and its counts in `import`; one user's part of it has
    /// `part_of_import` true (its `entry` is the import's).
    static func entry(_ entry: HistoryEntry) -> JSONValue {
        var object: [String: JSONValue] = [
            "entry": .int(entry.id),
            "at": .string(rfc3339(entry.at)),
            "user_id": entry.userID.map { .string(UUIDText.lowercase($0)) } ?? .null,
            "kind": .string(entry.kind.rawValue),
            "via": .string(entry.author.via.rawValue),
            "uid": entry.author.uid.map { .int(Int64($0)) } ?? .null,
            "user": entry.author.userName.map(JSONValue.string) ?? .null,
            "client": entry.author.client.map(JSONValue.string) ?? .null,
            "reverts": entry.author.reverting.map { .int($0) } ?? .null,
            "before": entry.before.map(fields) ?? .null,
            "after": entry.after.map(fields) ?? .null,
        ]
        if let batch = entry.batch {
            object["import"] = .object([
                "source": batch.source.map(JSONValue.string) ?? .null,
                "added": .int(Int64(batch.added)), "updated": .int(Int64(batch.updated)),
                "removed": .int(Int64(batch.removed)),
            ])
        }
        if entry.partOf { object["part_of_import"] = .bool(true) }
        return .object(object)
    }

    /// The reply to the undo of an import: its own entry, what it did, and whom it left alone.
    static func undo(of entry: Int64, _ undo: ImportUndo) -> JSONValue {
        .object([
            "entry": .int(entry),
            "undo_entry": undo.entry.map { .int($0) } ?? .null,
            "removed": .int(Int64(undo.removed)),
            "restored": .int(Int64(undo.restored)),
            "skipped": .array(undo.skipped.map { .string(UUIDText.lowercase($0)) }),
        ])
    }

    static func fields(_ fields: UserFields) -> JSONValue {
        .object([
            "name": .string(fields.name),
            "email": .string(fields.email),
            "avatar_url": fields.avatarURL.map(JSONValue.string) ?? .null,
        ])
    }

    static func event(_ event: UserHistoryEvent) -> ServerMessage.Event {
        switch event {
        case .didRevert(let entry, let user):
            ServerMessage.Event(screen: "history", name: "did_revert",
                                payload: ["entry": .int(entry), "user": user.map(self.user) ?? .null])
        }
    }

    /// `2026-12-02T13:20:07.123Z`.
    static func rfc3339(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true,
                                               timeZone: TimeZone(identifier: "UTC")!))
    }
}

extension UserHistoryState.Loading {
    /// The wire's names (snake case, like the list's `loading`).
    var wireName: String {
        switch self {
        case .none: "none"
        case .firstPage: "first_page"
        case .nextPage: "next_page"
        }
    }
}
