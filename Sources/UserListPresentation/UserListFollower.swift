import UserListDomain

/// An idle list's state, as a host may advance it through changes made elsewhere without
/// entering the list's actor: a fan-out to thousands of sessions showing the same page computes
/// each change once and sends it from the thread that learned of it.
///
/// It is not a second model. It applies the list ViewModel's own rule (`UserListViewModel.apply`
/// without a trim) and records each outcome in the change's `SharedListOutcomes`, so the
/// ViewModel, when it next runs, takes exactly these states as its own (`apply(_:markingStale:
/// sharing:)`). Where the ViewModel would do more than apply (trim rows past what its pages
/// loaded, which also moves its cursor), `following` returns nil and the host hands the change
/// to the ViewModel itself.
public struct UserListFollower: Sendable {
    public let state: UserListState
    /// The rows the ViewModel keeps through changes (past it, it trims).
    let capacity: Int

    init(state: UserListState, capacity: Int) {
        self.state = state
        self.capacity = capacity
    }

    /// The list after `change`, made elsewhere (so the list is marked stale, as the ViewModel
    /// marks it), or nil when only the ViewModel can apply it (a trim, or a resync).
    public func following(_ change: UserChange, sharing outcomes: SharedListOutcomes) -> UserListFollower? {
        if case .resync = change { return nil }
        if let after = outcomes.outcome(from: state, markingStale: true) {
            return UserListViewModel.wouldTrim(after, capacity: capacity) ? nil : UserListFollower(state: after, capacity: capacity)
        }
        var updated = state
        UserListViewModel.apply(change, to: &updated)
        guard !UserListViewModel.wouldTrim(updated, capacity: capacity) else { return nil }
        updated.isStale = true
        outcomes.record(from: state, markingStale: true, to: updated)
        return UserListFollower(state: updated, capacity: capacity)
    }
}
