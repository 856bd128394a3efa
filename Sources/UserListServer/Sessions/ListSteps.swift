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

    /// The step `list` takes by this change, if another list in its state recorded it. By index:
    /// copying each step out to compare it would retain all it holds, per session.
    func step(for list: UserListViewModel, markingStale: Bool) -> UserListStep? {
        steps.indices.first { steps[$0].markingStale == markingStale && list.isShowing(steps[$0].before) }
            .map { steps[$0] }
    }

    func record(_ step: UserListStep) {
        guard steps.count < Self.capacity else { return }
        steps.append(step)
    }
}
