import UserListDomain
import UserListPresentation

extension Navigator {
    /// Hands every change of `feed` to `apply(_:)`, on the caller's actor: the entry the daemon
    /// uses for each committed change (its loop calls `Session.apply`, which calls
    /// `Navigator.apply`), driven here by a test's feed instead of the daemon's loops.
    @discardableResult
    func follow(_ feed: any UserChangeFeed, isolation: isolated (any Actor) = #isolation) -> Task<Void, Never> {
        let changes = feed.subscribe()
        return Task { [weak self] in
            _ = isolation
            for await change in changes {
                guard let self else { return }
                self.apply(change, isolation: isolation)
            }
        }
    }
}
