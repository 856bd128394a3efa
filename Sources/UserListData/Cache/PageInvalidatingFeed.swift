import UserListDomain

/// `base`'s changes, each passed on only after `pages` has forgotten every page it shared.
///
/// An observer that reads the store because of a change (a list reloading on `.resync` above
/// all) must not be answered from a page cached before that change. Clearing the cache from a
/// second, independent observation would race with the first; doing it here, before the
/// handler, cannot. The pages are forgotten and the handler called on the base feed's thread (the
/// writer's), so wrapping the feed adds no task hop to the daemon's fan-out.
public struct PageInvalidatingFeed: UserChangeFeed {
    private let base: any UserChangeFeed
    private let pages: SharedPageRepository

    public init(base: any UserChangeFeed, pages: SharedPageRepository) {
        self.base = base
        self.pages = pages
    }

    public func observe(_ handler: @escaping @Sendable (CommittedChange) -> Void) -> ChangeObservation {
        let pages = self.pages
        return base.observe { committed in
            pages.invalidate()
            handler(committed)
        }
    }
}
