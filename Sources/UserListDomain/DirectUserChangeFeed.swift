/// A change feed that calls its observers on the thread that learns of a change (the writer
/// that committed it, or the watcher that saw another process commit), with no task in between.
///
/// The daemon's fan-out uses it to reach every session with one thread hand-off instead of a
/// stream per hop; `subscribe()` remains for everyone else.
public protocol DirectUserChangeFeed: UserChangeFeed {
    /// Calls `handler` with every change committed from now on, once each, in commit order, one
    /// call at a time. The handler runs on the feed's thread, so it must only hand the change on
    /// (it must not block, and must not observe or cancel from inside the call). Calls stop when
    /// the returned observation is cancelled or released.
    func observe(_ handler: @escaping @Sendable (CommittedChange) -> Void) -> ChangeObservation
    /// Whether every change comes with its change-log position (`CommittedChange.seq`).
    var deliversPositions: Bool { get }
}

extension DirectUserChangeFeed {
    public var deliversPositions: Bool { true }
}

/// A change with its place in the store's change log, so a writer holding a `CommitReceipt`
/// can tell its own changes from everyone else's, and know when the feed is past them.
public struct CommittedChange: Sendable, Equatable {
    public let change: UserChange
    /// The change-log position (commit order); nil from a feed that keeps no log.
    public let seq: Int?

    public init(_ change: UserChange, seq: Int?) {
        self.change = change
        self.seq = seq
    }
}

/// Keeps a `DirectUserChangeFeed` observer registered: cancelling it, or letting it go, stops the calls.
public final class ChangeObservation: Sendable {
    private let onCancel: @Sendable () -> Void

    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = onCancel
    }

    public func cancel() { onCancel() }

    deinit { onCancel() }
}
