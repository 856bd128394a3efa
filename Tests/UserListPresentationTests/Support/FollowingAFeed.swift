import UserListDomain
import UserListPresentation

extension Navigator {
    /// Hands every change of `feed` to `apply(_:)`, on the caller's actor: the entry the daemon
    /// uses for each committed change (its loop calls `Session.apply`, which calls
    /// `Navigator.apply`), driven here by a test's feed instead of the daemon's loops. The feed
    /// calls on its own thread; the changes reach the actor in order through a stream.
    @discardableResult
    func follow(_ feed: any UserChangeFeed, isolation: isolated (any Actor) = #isolation) -> Task<Void, Never> {
        let (changes, continuation) = AsyncStream.makeStream(of: UserChange.self, bufferingPolicy: .unbounded)
        let observation = feed.observe { continuation.yield($0.change) }
        return Task { [weak self] in
            _ = isolation
            defer { observation.cancel() }
            for await change in changes {
                guard let self else { return }
                self.apply(change, isolation: isolation)
            }
        }
    }
}
