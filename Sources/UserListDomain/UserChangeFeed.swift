import Foundation

/// One committed change to the set of users, or word that the feed lost track of them.
public enum UserChange: Equatable, Sendable {
    case saved(User)
    case added(User)
    case removed(id: UUID)
    /// The feed cannot say what changed since its last delivery (its log was pruned past it,
    /// e.g. after a long disconnection): anything may have changed, so whatever a subscriber
    /// shows should be read again. Changes after it are delivered as usual.
    case resync

    /// The user the change is about; nil for `resync`, which is about everyone.
    public var userID: UUID? {
        switch self {
        case .saved(let user), .added(let user): user.id
        case .removed(let id): id
        case .resync: nil
        }
    }
}

/// Announces committed changes, whoever made them (any session, an import, another process
/// writing the same store). State that several screens share lives behind this protocol: each
/// screen listens and updates itself, so no screen reaches into another.
///
/// Guarantee: each subscriber sees every change committed after it subscribed, once, in commit
/// order; or, where a feed cannot (it missed changes it can no longer read), `.resync` in their
/// place, after which it goes on with the changes that follow.
public protocol UserChangeFeed: Sendable {
    func subscribe() -> AsyncStream<UserChange>
}
