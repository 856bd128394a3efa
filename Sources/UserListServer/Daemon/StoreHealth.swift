import ThreadLocks

/// Whether the store answers, as the composition root learns it (for PostgreSQL: the change
/// feed's connection lost, then back). The daemon shows it in `STATUS=` and in `status`, and
/// logs each transition once; retries in between say nothing.
///
/// Only transitions are recorded: reporting the state it is already in does nothing.
public final class StoreHealth: Sendable {
    public enum State: Sendable, Equatable {
        case available
        /// The store cannot be reached; the daemon keeps its sessions and retries with backoff.
        case unavailable(reason: String)
    }

    private let state = Lock<State>(.available)
    private let stream = AsyncStream<State>.makeStream(bufferingPolicy: .unbounded)

    public init() {}

    /// The state now.
    public var current: State { state.withLock { $0 } }

    /// Records `new`; returns whether it was a transition.
    @discardableResult
    public func report(_ new: State) -> Bool {
        let changed = state.withLock { current -> Bool in
            // A new reason while still unavailable is not a transition.
            switch (current, new) {
            case (.available, .available), (.unavailable, .unavailable): return false
            default: current = new; return true
            }
        }
        if changed { stream.continuation.yield(new) }
        return changed
    }

    /// Every transition from now on (and those reported before anyone listened). One listener:
    /// the running daemon.
    package var transitions: AsyncStream<State> { stream.stream }
}
