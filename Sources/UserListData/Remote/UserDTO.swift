import Foundation
import UserListDomain

/// One user exactly as the REST service and the JSON import/export files spell it (REST.md):
/// `{"id", "full_name", "email", "avatar_url", "version"}`. Only this type knows the snake_case
/// keys; `toDomain()` is the one place the wire shape turns into a Domain `User`.
public struct UserDTO: Codable, Equatable, Sendable {
    public var id: UUID
    public var fullName: String
    public var email: String
    public var avatarURL: String?
    public var version: Int

    enum CodingKeys: String, CodingKey {
        case id, email, version
        case fullName = "full_name"
        case avatarURL = "avatar_url"
    }

    public init(id: UUID, fullName: String, email: String, avatarURL: String?, version: Int) {
        self.id = id
        self.fullName = fullName
        self.email = email
        self.avatarURL = avatarURL
        self.version = version
    }

    public init(_ user: User) {
        self.init(id: user.id, fullName: user.name, email: user.email, avatarURL: user.avatarURL, version: user.version)
    }

    /// An empty `avatar_url` means "no avatar", as `null` does.
    public func toDomain() -> User {
        User(id: id, name: fullName, email: email,
             avatarURL: avatarURL.flatMap { $0.isEmpty ? nil : $0 }, version: version)
    }
}

/// One page of `GET /users?page=N&per_page=M` (REST.md). Pages are numbered from 1.
public struct PageDTO: Codable, Equatable, Sendable {
    public var page: Int
    public var perPage: Int
    public var total: Int
    public var totalPages: Int
    public var data: [UserDTO]

    enum CodingKeys: String, CodingKey {
        case page, total, data
        case perPage = "per_page"
        case totalPages = "total_pages"
    }

    public init(page: Int, perPage: Int, total: Int, totalPages: Int, data: [UserDTO]) {
        self.page = page
        self.perPage = perPage
        self.total = total
        self.totalPages = totalPages
        self.data = data
    }
}
