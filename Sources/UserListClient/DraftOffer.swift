import UserListWire

/// A draft the client still holds when its connection drops, offered back to the daemon after
/// reattaching if the restored session lacks it (a crash between two of the daemon's journal
/// writes, or text typed while away): the session intent `offer_draft`, with every field whose
/// draft differs from the stored user. The daemon takes it while the user is still at
/// `baseVersion`, else replies `conflict` quoting the text, so no typed character is lost
/// silently either way.
public struct DraftOffer: Sendable, Equatable {
    public var userID: String
    /// The changed fields as typed (the avatar URL's absence is the empty text).
    public var fields: [DetailField: String]
    public var baseVersion: Int

    public init(userID: String, fields: [DetailField: String], baseVersion: Int) {
        self.userID = userID
        self.fields = fields
        self.baseVersion = baseVersion
    }

    /// What to offer when the connection drops while `document` shows a detail screen with an
    /// unsaved edit; `localDrafts` are the fields as typed, which may be ahead of the document.
    public static func held(in document: SessionDocument, localDrafts: [DetailField: String]) -> DraftOffer? {
        guard document.showsDetail, let detail = document.detail, let user = detail.user else { return nil }
        var fields: [DetailField: String] = [:]
        for field in DetailField.allCases {
            let text = localDrafts[field] ?? detail.draft(field)
            if text != detail.stored(field) { fields[field] = text }
        }
        guard !fields.isEmpty else { return nil }
        return DraftOffer(userID: detail.userID, fields: fields, baseVersion: user.version)
    }

    /// Whether the session as restored still lacks this draft (so it must be offered).
    public func isMissing(from document: SessionDocument) -> Bool {
        guard let detail = document.detail, document.showsDetail, detail.userID == userID else { return true }
        return fields.contains { field, text in detail.draft(field) != text }
    }

    /// The intent's arguments (`screen: "session"`, `action: "offer_draft"`): the changed
    /// fields under their wire names (`name`, `email`, `avatar_url`).
    public var arguments: [String: JSONValue] {
        var arguments: [String: JSONValue] = ["user_id": .string(userID), "base_version": .int(Int64(baseVersion))]
        for (field, text) in fields { arguments[field.rawValue] = .string(text) }
        return arguments
    }
}
