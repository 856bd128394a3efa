import UserListPresentation

/// What one committed change did to the list states on one loop (`UserListStep`s), kept while
/// the loop applies the change to its sessions, so lists showing the very same rows compute it
/// once.
///
/// Most sessions in a fan-out show the same window (the first page, no search) and, because
/// pages are shared (`SharedPageRepository`) and replayed steps keep the rows' storage, the
/// same row storage. The first list to apply the change records its step; every other list in
/// the same state replays it, and so shares storage with it for the next change too.
final class ListSteps {
    /// A handful of distinct windows at most; past that, lists compute their own.
    static let capacity = 8
    private var steps: [UserListStep] = []

    /// The step a list in `state` takes by this change, if another list in that state recorded it.
    func step(from state: UserListState, markingStale: Bool) -> UserListStep? {
        steps.first { $0.markingStale == markingStale && $0.before.isIdentical(to: state) }
    }

    func record(_ step: UserListStep) {
        guard steps.count < Self.capacity else { return }
        steps.append(step)
    }
}
