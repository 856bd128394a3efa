import Dispatch
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
    /// Users the first catch-up slice indexes in one transaction; the next ones take as many
    /// as fit in `mergeSliceTarget` of the writer, as the last one ran (4,000 a slice, fixed,
    /// took 48-84 ms at 400,000 users, and a save that arrived meanwhile waited that long).
    static let catchUpSliceRows = 1_000

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
            var rows = Self.catchUpSliceRows
            while !finished {
                guard let self else { return }
                await self.bulkGate.enter()
                let sliceRows = rows
                let (done, seconds) = (try? await writer.perform { connection throws(SQLiteError) -> (Bool, Double) in
                    let start = DispatchTime.now().uptimeNanoseconds
                    let done = try SQLiteSearchIndex.catchUp(connection, rows: sliceRows)
                    return (done, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                }) ?? (true, 0)
                await self.bulkGate.leave()
                rows = Self.nextSliceRows(rows, took: seconds, range: 250...20_000)
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
