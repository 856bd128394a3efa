import Foundation
import UserListDomain

/// Everything the user detail (edit) screen shows, as one value.
///
/// The draft is per field (name, email, avatar URL: the avatar's absence is the empty text), and
/// is based on `user`, the stored user as this screen last saw it. A save by someone else is
/// merged into the draft as it arrives (`UserMerge`): fields they changed that this draft left
/// follow theirs (`followed`), fields both changed differently wait for a choice (`conflicts`).
public struct UserDetailState: Equatable, Codable, Sendable {
    public var userID: UUID
    /// The stored user the draft is based on; nil until loaded, for a new user, or once removed.
    public var user: User?
    public var draftName = ""
    public var draftEmail = ""
    public var draftAvatarURL = ""
    public var isSaving = false
    public var errorMessage: String?
    /// A screen for a user not stored yet (a new user, or one removed meanwhile to create again):
    /// its save adds the user under `userID`.
    public var isNew = false
    /// The session may look but not change: the screen takes no edits.
    public var isReadOnly = false
    /// Fields this draft and someone else's save both changed, differently: theirs, beside mine.
    /// Nothing is saved until each is settled (`keepMine`, `takeTheirs`).
    public var conflicts: [FieldConflict] = []
    /// Fields that took someone else's saved value since this person last typed.
    public var followed: [FollowedChange] = []
    /// Set when the user was removed while this screen was open: who removed it, when known.
    public var removal: Removal?

    public init(userID: UUID) { self.userID = userID }

    /// What the person has typed, as one value.
    public var draft: UserFields {
        get { UserFields(name: draftName, email: draftEmail, avatarURL: draftAvatarURL.isEmpty ? nil : draftAvatarURL) }
        set {
            draftName = newValue.name
            draftEmail = newValue.email
            draftAvatarURL = newValue.avatarURL ?? ""
        }
    }

    /// What the draft is compared against: the stored user's fields, or empty ones for a new user.
    public var base: UserFields? {
        if let user { return UserFields(user) }
        return isNew ? UserFields(name: "", email: "") : nil
    }

    /// The fields whose draft differs from what is stored, in field order.
    public var dirtyFields: [UserField] {
        guard let base else { return [] }
        let draft = self.draft
        return UserField.allCases.filter { draft[$0] != base[$0] }
    }

    public var isDirty: Bool { !dirtyFields.isEmpty }

    /// Why a changed field could not be saved as typed, per field (unchanged fields are stored
    /// values and need no check). Shown as the person types.
    public var fieldErrors: [UserField: String] {
        var errors: [UserField: String] = [:]
        let fields = isNew ? UserField.allCases : dirtyFields
        for field in fields {
            do throws(UserError) {
                switch field {
                case .name: _ = try UserValidation.validName(draftName)
                case .email: _ = try UserValidation.validEmail(draftEmail)
                case .avatarURL: _ = try UserValidation.validAvatarURL(draftAvatarURL)
                }
            } catch {
                errors[field] = error.message
            }
        }
        return errors
    }

    /// The draft is now based on `stored`, a user that exists, with nothing left to settle: after
    /// this screen's own save, or when the user it was creating (again) exists.
    mutating func settle(on stored: User) {
        user = stored
        isNew = false
        removal = nil
        conflicts.removeAll()
        followed.removeAll()
    }

    /// Whether a save could succeed as far as this screen can tell (the store has the last word).
    public var canSave: Bool {
        isDirty && !isSaving && !isReadOnly && conflicts.isEmpty && (user != nil || isNew) && fieldErrors.isEmpty
    }

    private enum CodingKeys: String, CodingKey {
        case userID, user, draftName, draftEmail, draftAvatarURL, isSaving, errorMessage, isNew, isReadOnly
        case conflicts, followed, removal, isDirty, canSave
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        userID = try c.decode(UUID.self, forKey: .userID)
        user = try c.decodeIfPresent(User.self, forKey: .user)
        draftName = try c.decode(String.self, forKey: .draftName)
        draftEmail = try c.decodeIfPresent(String.self, forKey: .draftEmail) ?? user?.email ?? ""
        draftAvatarURL = try c.decodeIfPresent(String.self, forKey: .draftAvatarURL) ?? user?.avatarURL ?? ""
        isSaving = try c.decodeIfPresent(Bool.self, forKey: .isSaving) ?? false
        errorMessage = try c.decodeIfPresent(String.self, forKey: .errorMessage)
        isNew = try c.decodeIfPresent(Bool.self, forKey: .isNew) ?? false
        isReadOnly = try c.decodeIfPresent(Bool.self, forKey: .isReadOnly) ?? false
        conflicts = try c.decodeIfPresent([FieldConflict].self, forKey: .conflicts) ?? []
        followed = try c.decodeIfPresent([FollowedChange].self, forKey: .followed) ?? []
        removal = try c.decodeIfPresent(Removal.self, forKey: .removal)
    }

    /// Derived flags are written out too, so a thin client renders them without reimplementing rules.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(userID, forKey: .userID)
        try c.encode(user, forKey: .user)
        try c.encode(draftName, forKey: .draftName)
        try c.encode(draftEmail, forKey: .draftEmail)
        try c.encode(draftAvatarURL, forKey: .draftAvatarURL)
        try c.encode(isSaving, forKey: .isSaving)
        try c.encode(errorMessage, forKey: .errorMessage)
        try c.encode(isNew, forKey: .isNew)
        try c.encode(isReadOnly, forKey: .isReadOnly)
        try c.encode(conflicts, forKey: .conflicts)
        try c.encode(followed, forKey: .followed)
        try c.encode(removal, forKey: .removal)
        try c.encode(isDirty, forKey: .isDirty)
        try c.encode(canSave, forKey: .canSave)
    }
}

/// A field both this draft and someone else's save changed, differently.
public struct FieldConflict: Equatable, Codable, Sendable {
    public var field: UserField
    /// Their saved value, as typed (the avatar's absence is the empty text).
    public var theirs: String
    /// Who saved it ("alice"), once known; nil while unknown.
    public var author: String?
    /// The stored version that carried it.
    public var version: Int

    public init(field: UserField, theirs: String, author: String? = nil, version: Int) {
        self.field = field
        self.theirs = theirs
        self.author = author
        self.version = version
    }
}

/// A field that followed someone else's save while this person had a draft.
public struct FollowedChange: Equatable, Codable, Sendable {
    public var field: UserField
    public var author: String?
    public var version: Int

    public init(field: UserField, author: String? = nil, version: Int) {
        self.field = field
        self.author = author
        self.version = version
    }
}

/// The user was removed while this screen was open.
public struct Removal: Equatable, Codable, Sendable {
    /// Who removed it, once known.
    public var author: String?
    /// The stored user the draft was based on when it was removed. If someone else creates the
    /// same id again, that user is merged in as a save over this one (`UserMerge`): fields this
    /// person left follow the new user, so a screen nobody typed on never holds a stale draft.
    public var base: User? {
        get { boxed?.user }
        set { boxed = newValue.map(Boxed.init) }
    }

    /// One reference in place of a whole user: a screen's state is as large as its largest kind
    /// (this one's), and every session holds one, a list's included.
    private var boxed: Boxed?

    private final class Boxed: Sendable {
        let user: User
        init(_ user: User) { self.user = user }
    }

    public init(author: String? = nil, base: User? = nil) {
        self.author = author
        self.base = base
    }

    public static func == (a: Removal, b: Removal) -> Bool { a.author == b.author && a.base == b.base }

    private enum CodingKeys: String, CodingKey { case author, base }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        author = try container.decodeIfPresent(String.self, forKey: .author)
        base = try container.decodeIfPresent(User.self, forKey: .base)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(author, forKey: .author)
        try container.encodeIfPresent(base, forKey: .base)
    }
}

/// One-shot things the detail screen tells its host.
public enum UserDetailEvent: Equatable, Sendable {
    case didSave(User)
}
