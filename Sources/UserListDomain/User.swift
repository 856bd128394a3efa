import Foundation

/// A person in the directory: the value every layer agrees on.
///
/// `version` is the optimistic-concurrency token: a save names the version it edited, and the
/// store accepts it only if that is still the stored version (then bumps it).
///
/// `avatarURL` is kept as text, not `URL`: rows are compared on every state diff, and `URL`
/// equality costs about five times more than `String` equality (see PERF-NOTES.md).
public struct User: Equatable, Hashable, Sendable, Identifiable, Codable {
    public let id: UUID
    public var name: String
    public var email: String
    public var avatarURL: String?
    public var version: Int

    public init(id: UUID, name: String, email: String, avatarURL: String? = nil, version: Int = 1) {
        self.id = id
        self.name = name
        self.email = email
        self.avatarURL = avatarURL
        self.version = version
    }
}

/// The fields a new user is created with; the store assigns the version.
public struct NewUser: Equatable, Sendable {
    public var id: UUID
    public var name: String
    public var email: String
    public var avatarURL: String?

    public init(id: UUID = UUID(), name: String, email: String, avatarURL: String? = nil) {
        self.id = id
        self.name = name
        self.email = email
        self.avatarURL = avatarURL
    }
}
