import Foundation
import UserListDomain

/// Everything the user detail (edit) screen shows, as one value.
public struct UserDetailState: Equatable, Codable, Sendable {
    public var userID: UUID
    /// The stored user the draft is based on; nil until loaded.
    public var user: User?
    public var draftName = ""
    public var isSaving = false
    public var errorMessage: String?
    /// Set when this screen's save lost a version race: what is stored now. The draft is kept.
    public var conflict: User?

    public init(userID: UUID) { self.userID = userID }

    public var isDirty: Bool { user.map { $0.name != draftName } ?? false }

    /// Whether a save could succeed as far as this screen can tell (the store has the last word).
    ///
    /// Read twice per keystroke by a daemon diffing the screen, so it stays cheap: validation's
    /// own trimming (Foundation's, without Foundation), and characters counted only for a draft
    /// whose bytes could exceed the limit (each character is at least one byte).
    public var canSave: Bool {
        guard isDirty, !isSaving else { return false }
        let trimmed = UserValidation.trimmed(draftName)
        let limit = UserValidation.maximumNameLength
        return !trimmed.isEmpty && (trimmed.utf8.count <= limit || trimmed.count <= limit)
    }

    private enum CodingKeys: String, CodingKey {
        case userID, user, draftName, isSaving, errorMessage, conflict, isDirty, canSave
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        userID = try c.decode(UUID.self, forKey: .userID)
        user = try c.decodeIfPresent(User.self, forKey: .user)
        draftName = try c.decode(String.self, forKey: .draftName)
        isSaving = try c.decodeIfPresent(Bool.self, forKey: .isSaving) ?? false
        errorMessage = try c.decodeIfPresent(String.self, forKey: .errorMessage)
        conflict = try c.decodeIfPresent(User.self, forKey: .conflict)
    }

    /// Derived flags are written out too, so a thin client renders them without reimplementing rules.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(userID, forKey: .userID)
        try c.encode(user, forKey: .user)
        try c.encode(draftName, forKey: .draftName)
        try c.encode(isSaving, forKey: .isSaving)
        try c.encode(errorMessage, forKey: .errorMessage)
        try c.encode(conflict, forKey: .conflict)
        try c.encode(isDirty, forKey: .isDirty)
        try c.encode(canSave, forKey: .canSave)
    }
}

/// One-shot things the detail screen tells its host.
public enum UserDetailEvent: Equatable, Sendable {
    case didSave(User)
}
