import UserListDomain

/// `base`'s changes, each passed on only after `pages` has forgotten every page it shared.
///
/// A subscriber that reads the store because of a change (a list reloading on `.resync` above
/// all) must not be answered from a page cached before that change. Clearing the cache from a
/// second, independent subscription would race with the first; doing it here, before the yield,
/// cannot.
///
/// Over a `DirectUserChangeFeed` (SQLite's) it is direct too: the pages are forgotten and the
/// observer called on the writer's thread, so wrapping the feed adds no task hop to the daemon's
/// fan-out. Over any other feed, `observe` pumps `subscribe()` from a task.
public struct PageInvalidatingFeed: DirectUserChangeFeed {
    private let base: any UserChangeFeed
    private let pages: SharedPageRepository

    public init(base: any UserChangeFeed, pages: SharedPageRepository) {
        self.base = base
        self.pages = pages
    }

    /// As its base: a feed with no log has no positions to give.
    public var deliversPositions: Bool { (base as? any DirectUserChangeFeed)?.deliversPositions ?? false }

    public func observe(_ handler: @escaping @Sendable (CommittedChange) -> Void) -> ChangeObservation {
        let pages = self.pages
        if let direct = base as? any DirectUserChangeFeed {
            return direct.observe { committed in
                pages.invalidate()
                handler(committed)
            }
        }
        // A feed without a log: its changes have no position.
        let changes = subscribe()
        let task = Task.detached {
            for await change in changes { handler(CommittedChange(change, seq: nil)) }
        }
        return ChangeObservation { task.cancel() }
    }

    public func subscribe() -> AsyncStream<UserChange> {
        let changes = base.subscribe()
        let pages = self.pages
        let (stream, continuation) = AsyncStream.makeStream(of: UserChange.self, bufferingPolicy: .unbounded)
        let task = Task.detached {
            for await change in changes {
                pages.invalidate()
                continuation.yield(change)
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}
