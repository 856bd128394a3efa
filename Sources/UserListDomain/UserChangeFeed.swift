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
/// A feed calls its observers on the thread that learns of a change (the writer that committed
/// it, or the watcher that saw another process commit), with no task in between: the daemon's
/// fan-out reaches every session with one thread hand-off.
///
/// Guarantee: each observer sees every change committed after it began observing, once, in
/// commit order, with its change-log position; or, where a feed cannot (it missed changes it can
/// no longer read), `.resync` in their place, after which it goes on with the changes that follow.
public protocol UserChangeFeed: Sendable {
    /// Calls `handler` with every change committed from now on, once each, in commit order, one
    /// call at a time. The handler runs on the feed's thread, so it must only hand the change on
    /// (it must not block, and must not observe or cancel from inside the call). Calls stop when
    /// the returned observation is cancelled or released.
    func observe(_ handler: @escaping @Sendable (CommittedChange) -> Void) -> ChangeObservation
}

/// A change with its place in the store's change log, so a writer holding a `CommitReceipt`
/// can tell its own changes from everyone else's, and know when the feed is past them.
public struct CommittedChange: Sendable, Equatable {
    public let change: UserChange
    /// The change-log position (commit order; a `.resync` has the position of the last change
    /// it stands in for).
    public let seq: Int

    public init(_ change: UserChange, seq: Int) {
        self.change = change
        self.seq = seq
    }
}

/// Keeps a `UserChangeFeed` observer registered: cancelling it, or letting it go, stops the calls.
public final class ChangeObservation: Sendable {
    private let onCancel: @Sendable () -> Void

    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = onCancel
    }

    public func cancel() { onCancel() }

    deinit { onCancel() }
}
