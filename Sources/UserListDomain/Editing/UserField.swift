/// One editable field of a user, as validation errors, drafts and merges name it.
public typealias UserField = UserError.Field

extension UserError.Field: CaseIterable {
    public static let allCases: [UserError.Field] = [.name, .email, .avatarURL]

    /// The field in a person's words: "the email changed", "Remove NAME (EMAIL)?".
    public var label: String {
        switch self {
        case .name: "name"
        case .email: "email"
        case .avatarURL: "avatar URL"
        }
    }
}

extension UserFields {
    /// A field as a person types it: the avatar URL's absence is the empty text.
    public subscript(field: UserField) -> String {
        get {
            switch field {
            case .name: name
            case .email: email
            case .avatarURL: avatarURL ?? ""
            }
        }
        set {
            switch field {
            case .name: name = newValue
            case .email: email = newValue
            case .avatarURL: avatarURL = newValue.isEmpty ? nil : newValue
            }
        }
    }
}
