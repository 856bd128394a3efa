import Synchronization
import ThreadLocks

/// Whether the catch-up runs, and who waits for it to end.
struct SearchCatchUpState: ~Copyable {
    var running = false
    /// Asked for again while running: a bulk load may have started the index over.
    var askedAgain = false
    var waiting: [CheckedContinuation<Void, Never>] = []
}

extension SQLiteUserRepository {
    /// Users a catch-up slice indexes in one transaction: about 25 ms of the writer at 1M users,
    /// so a save that arrives meanwhile waits about that long at most.
    static let catchUpSliceRows = 4_000

    /// Fills the search index's backlog (see `SQLiteSearchIndex`), a slice at a time, taking its
    /// turn with import chunks at the bulk gate; saves queue at the writer between slices. Runs
    /// until no backlog is left; a slice that fails (a full disk, another process holding the
    /// lock past the busy timeout) ends it, the backlog kept for the next bulk load or the next
    /// start, and searches stay right meanwhile.
    func catchUpSearchIndex() {
        guard let writer, options.catchesUpSearchIndex else { return }
        let start = searchCatchUp.withLock { state in
            if state.running { state.askedAgain = true }
            defer { state.running = true }
            return !state.running
        }
        guard start else { return }
        Task.detached(priority: .utility) { [weak self] in
            var finished = false
            while !finished {
                guard let self else { return }
                await self.bulkGate.enter()
                let done = (try? await writer.perform { connection throws(SQLiteError) in
                    try SQLiteSearchIndex.catchUp(connection, rows: Self.catchUpSliceRows)
                }) ?? true
                await self.bulkGate.leave()
                guard done else { continue }
                let waiting = self.searchCatchUp.withLock { state -> [CheckedContinuation<Void, Never>]? in
                    if state.askedAgain {
                        state.askedAgain = false
                        return nil
                    }
                    state.running = false
                    defer { state.waiting = [] }
                    return state.waiting
                }
                if let waiting {
                    for continuation in waiting { continuation.resume() }
                    finished = true
                }
            }
        }
    }

    /// Returns once no catch-up runs: for the bench and tests, which time or check a store
    /// whose index is whole.
    public func searchIndexCaughtUp() async {
        await withCheckedContinuation { continuation in
            let now = searchCatchUp.withLock { state -> Bool in
                guard state.running else { return true }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
