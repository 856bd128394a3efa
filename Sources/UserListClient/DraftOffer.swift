import UserListWire

/// A draft the client still holds when its connection drops, offered back to the daemon after
/// reattaching if the restored session lacks it (a crash between two of the daemon's journal
/// writes): the session intent `offer_draft`. The daemon takes it while the user is still at
/// `baseVersion`, else replies `conflict` quoting the text, so no typed character is lost
/// silently either way.
public struct DraftOffer: Sendable, Equatable {
    public var userID: String
    public var name: String
    public var baseVersion: Int

    public init(userID: String, name: String, baseVersion: Int) {
        self.userID = userID
        self.name = name
        self.baseVersion = baseVersion
    }

    /// What to offer when the connection drops while `document` shows a detail screen with an
    /// unsaved edit; `localDraft` is the text as typed, which may be ahead of the document.
    public static func held(in document: SessionDocument, localDraft: String?) -> DraftOffer? {
        guard document.showsDetail, let detail = document.detail, let user = detail.user else { return nil }
        let text = localDraft ?? detail.draftName
        guard text != user.name else { return nil }
        return DraftOffer(userID: detail.userID, name: text, baseVersion: user.version)
    }

    /// Whether the session as restored still lacks this draft (so it must be offered).
    public func isMissing(from document: SessionDocument) -> Bool {
        guard let detail = document.detail, document.showsDetail, detail.userID == userID else { return true }
        return detail.draftName != name
    }

    /// The intent's arguments (`screen: "session"`, `action: "offer_draft"`).
    public var arguments: [String: JSONValue] {
        ["user_id": .string(userID), "name": .string(name), "base_version": .int(Int64(baseVersion))]
    }
}
