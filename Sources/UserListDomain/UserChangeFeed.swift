import Foundation

/// One committed change to the set of users.
public enum UserChange: Equatable, Sendable {
    case saved(User)
    case added(User)
    case removed(id: UUID)

    public var userID: UUID {
        switch self {
        case .saved(let user), .added(let user): user.id
        case .removed(let id): id
        }
    }
}

/// Announces committed changes, whoever made them (any session, an import, another process
/// writing the same store). State that several screens share lives behind this protocol: each
/// screen listens and updates itself, so no screen reaches into another.
///
/// Guarantee: each subscriber sees every change committed after it subscribed, once, in commit order.
public protocol UserChangeFeed: Sendable {
    func subscribe() -> AsyncStream<UserChange>
}
