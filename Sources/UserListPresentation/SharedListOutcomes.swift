import UserListDomain

/// What one committed change made of list states, kept while the change is being applied by
/// every session, so lists showing the very same rows compute it once.
///
/// Most sessions in a fan-out show the same window (the first page, no search) and, because pages
/// are shared (`SharedPageRepository`) and results are adopted here, the same row storage. The
/// first list to apply the change records its before and after; every other list whose state
/// is the same value (the same row storage, the same other fields) takes the recorded after as
/// its own, and so shares storage with it for the next change too. The list ViewModel stays the
/// only model: the state it adopts is exactly what its own `apply` would have produced.
///
/// Used on one thread for one change: the host decides which lists share one (the daemon makes
/// one per change on each event loop, for the sessions of that loop), so it needs no lock.
public final class SharedListOutcomes {
    private struct Entry {
        let before: UserListState
        let markingStale: Bool
        let after: UserListState
        let trim: Trim?
    }

    /// A list cut back to its loaded rows (`UserListViewModel`'s trim) also moved its cursor:
    /// a list with the same row capacity reaches the same outcome, and takes the cursor too.
    struct Trim {
        let capacity: Int
        let next: PageCursor
    }

    /// A handful of distinct windows at most; past that, lists compute their own.
    static let capacity = 8
    private var entries: [Entry] = []

    public init() {}

    /// The state a list in `state` reaches by this change, if another list in the same state
    /// recorded it.
    func outcome(from state: UserListState, markingStale: Bool) -> (after: UserListState, trim: Trim?)? {
        entries.first { $0.markingStale == markingStale && Self.isSameValue($0.before, state) }.map { ($0.after, $0.trim) }
    }

    /// The state a list in `state` reaches by this change, if another list recorded it and
    /// reaching it cut no rows (so it moved no cursor): what a host following many lists as
    /// one takes for all of them.
    public func uncutOutcome(from state: UserListState, markingStale: Bool) -> UserListState? {
        guard let (after, trim) = outcome(from: state, markingStale: markingStale), trim == nil else { return nil }
        return after
    }

    func record(from before: UserListState, markingStale: Bool, to after: UserListState, trim: Trim? = nil) {
        guard entries.count < Self.capacity else { return }
        entries.append(Entry(before: before, markingStale: markingStale, after: after, trim: trim))
    }

    /// Whether two states are the same value, cheaply: the rows by storage identity (shared
    /// storage holds equal rows), everything else by value. States with equal rows in separate
    /// storage count as different (they compute their own outcome, which is merely slower).
    public static func isSameValue(_ a: UserListState, _ b: UserListState) -> Bool {
        guard a.users.count == b.users.count,
              a.users.withUnsafeBufferPointer({ x in b.users.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress } })
        else { return false }
        return a.loading == b.loading && a.errorMessage == b.errorMessage && a.hasMore == b.hasMore
            && a.hasPrevious == b.hasPrevious && a.totalCount == b.totalCount && a.search == b.search
            && a.isStale == b.isStale
    }
}
