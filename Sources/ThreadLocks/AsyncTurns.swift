/// Turns taken one at a time, first come, first served, by tasks that wait without holding a
/// thread: the lock for async code, where a `Lock` held across an `await` would block a
/// thread of the pool.
public actor AsyncTurns {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    public init() {}

    /// Waits for the turn; every `enter` is matched by one `leave`.
    public func enter() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Passes the turn to the longest waiter, if any.
    public func leave() {
        if waiting.isEmpty {
            busy = false
        } else {
            waiting.removeFirst().resume()  // the turn passes on: `busy` stays true
        }
    }
}
