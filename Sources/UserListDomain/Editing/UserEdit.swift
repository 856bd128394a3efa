/// A change to some of a user's fields (`userctl set`): each field given is changed, the rest
/// are left as stored. `avatarURL` is doubly optional: `.some(nil)` removes the avatar.
public struct UserEdit: Equatable, Sendable {
    public var name: String?
    public var email: String?
    public var avatarURL: String??

    public init(name: String? = nil, email: String? = nil, avatarURL: String?? = nil) {
        self.name = name
        self.email = email
        self.avatarURL = avatarURL
    }

    /// The fields this edit changes, in field order.
    public var fields: [UserField] {
        [name.map { _ in UserField.name }, email.map { _ in .email }, avatarURL.map { _ in .avatarURL }]
            .compactMap { $0 }
    }

    /// `user` with this edit's fields in place of the stored ones (same id and version).
    public func applied(to user: User) -> User {
        var edited = user
        if let name { edited.name = name }
        if let email { edited.email = email }
        if let avatarURL { edited.avatarURL = avatarURL }
        return edited
    }
}
