import Dispatch
import Foundation
import ThreadLocks
import UserListDomain

/// Whether an import this process merges holds its guard (`SQLiteImportGuard`), and the
/// writes waiting for it to be lifted.
struct ImportMergeState: ~Copyable {
    var running = false
    var waiting: [CheckedContinuation<Void, Never>] = []
}

/// Runs a committed import's merge (`SQLiteImportMerge`) in the daemon: the checks on a
/// connection of their own, then slice after slice on the writer, each taking its turn at the
/// bulk gate, so another client's save waits for a slice at most.
extension SQLiteUserRepository {
    /// What a slice aims to take of the writer: a save that arrives meanwhile waits that long.
    static let mergeSliceTarget = 0.02
    static let firstMergeSliceRows = 1_000
    static let clearSliceRows = 10_000

    /// Merges committed import `id`. A refused entry drops it; a store failure leaves it
    /// committed (guard included): the next open finishes it.
    func mergeStagedImport(_ id: Int) async throws(UserError) -> ImportSummary {
        await mergeTurns.enter()
        importMerge.withLock { $0.running = true }
        let result: Result<SQLiteImportMerge.Outcome, UserError>
        var decided = false
        await setWriterCache(kiB: Self.mergeCacheKiB)
        do throws(UserError) {
            result = try await mergeSlices(id)
            decided = true
        } catch {
            let reason = if case .unavailable(let reason) = error { reason } else { error.message }
            result = .failure(.importKept(reason: reason
                + " The import was accepted whole: the daemon finishes it when it next opens the store."))
        }
        await setWriterCache(kiB: Self.normalCacheKiB)
        guardLifted()
        if decided { clearAfterReply(id) } else { await mergeTurns.leave() }
        let outcome = try result.get()
        if outcome.leftSearchBacklog { catchUpSearchIndex() }
        return ImportSummary(read: outcome.read, written: outcome.written)
    }

    private func mergeSlices(_ id: Int) async throws(UserError) -> Result<SQLiteImportMerge.Outcome, UserError> {
        let refusal = try await sortFillAndCheck(id)
        try await write({ connection throws(SQLiteError) in
            try SQLiteImportMerge.decide(id, accepted: refusal == nil, connection)
        }, committed: { _ in nil })
        if refusal != nil { guardLifted() }
        var outcome = SQLiteImportMerge.Outcome()
        if refusal == nil {
            var rows = options.mergeSliceRows ?? Self.firstMergeSliceRows
            var slices = 0
            while true {
                let sliceRows = rows
                let slice = try await sliceTurn { [self] connection throws(SQLiteError) -> SQLiteImportMerge.Slice in
                    return try SQLiteImportMerge.slice(id, rows: sliceRows, more: { self.nobodyWaits }, connection)
                } committed: { slice in
                    slice.last && slice.written > 0 ? .readTheLog : nil
                }
                outcome.written = slice.written
                // A slice may set the search index's mark: the catch-up clears it.
                outcome.leftSearchBacklog = slice.written > 0
                slices += 1
                if slice.last { guardLifted() }
                if let pause = options.afterMergeSlice { await pause(slices) }
                if slice.last { break }
                rows = options.mergeSliceRows ?? slice.rows
            }
        }
        outcome.read = try read { connection throws(SQLiteError) -> Int in
            try SQLiteImportMerge.entries(of: id, connection)
        }
        return refusal.map { .failure($0) } ?? .success(outcome)
    }

    /// Sizes the writer's page cache (for the whole merge: saves between its slices keep the
    /// pages it wants, and a slice does not read them again). A failure keeps the size it had.
    private func setWriterCache(kiB: Int) async {
        _ = try? await writer?.perform { connection throws(SQLiteError) in
            try connection.execute("PRAGMA cache_size = -\(kiB)", SQLiteImportMerge.operation)
        }
    }

    /// Deletes a decided import's rows (staged, sorted, its guard, the import itself) after the
    /// reply, in slices, holding the merge turn so that the next import's merge starts after it.
    ///
    /// Why after: at 330,000 entries the deletion took about a second the client waited for,
    /// and nothing the user sees depends on it (the merge's last slice lifted the guard and
    /// marked the import `merged`). A stop or crash before it ends leaves the rows to the
    /// next open, which finishes the deletion (`SQLiteImportMerge.finish`) before serving.
    private func clearAfterReply(_ id: Int) {
        Task.detached(priority: .utility) { [self] in
            if let pause = options.beforeClearingImport { await pause() }
            var rows = Self.clearSliceRows, done = false
            while !done {
                let clearRows = rows
                // A failure (the store closed by a stop, a full disk) leaves them to the next open.
                guard let step = try? await sliceTurn({ [self] connection throws(SQLiteError) -> (Bool, Int) in
                    return try SQLiteImportMerge.clear(id, rows: clearRows, more: { self.nobodyWaits }, connection)
                }, committed: { _ in nil }) else { break }
                (done, rows) = step
            }
            await mergeTurns.leave()
        }
    }

    /// Returns once no finished import's rows are being deleted (`clearAfterReply`): for tests
    /// and the bench, which look at a store with nothing of an import left in it.
    public func importRowsCleared() async {
        await mergeTurns.enter()
        await mergeTurns.leave()
    }

    /// Sorts the entries off the writer (`SQLiteImportSort`), then copies them in, slice by slice.
    private func sortAndFill(_ id: Int) async throws(UserError) {
        let path = self.path
        try await apart { () throws(SQLiteError) in try SQLiteImportSort.sort(id, store: path) }
        let result: Result<Void, UserError>
        do throws(UserError) {
            try await write({ connection throws(SQLiteError) in
                try SQLiteImportSort.attach(id, store: path, connection)
            }, committed: { _ in nil })
            var rows = Self.clearSliceRows, done = false
            while !done {
                let fillRows = rows
                (done, rows) = try await sliceTurn { [self] connection throws(SQLiteError) -> (Bool, Int) in
                    return try SQLiteImportSort.fill(id, rows: fillRows, more: { self.nobodyWaits }, connection)
                } committed: { _ in nil }
            }
            result = .success(())
        } catch {
            result = .failure(error)
        }
        _ = try? await write({ connection throws(SQLiteError) in
            SQLiteImportSort.discard(id, store: path, connection)
        }, committed: { _ in nil })
        try result.get()
    }

    /// Runs `body` on a thread of its own (not the writer, not the cooperative pool): the
    /// sort and the checks read for seconds on a big import.
    private func apart<T: Sendable>(
        _ body: @escaping @Sendable () throws(SQLiteError) -> T
    ) async throws(UserError) -> T {
        let result: Result<T, SQLiteError> = await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .utility).async {
                continuation.resume(returning: Result { () throws(SQLiteError) -> T in try body() })
            }
        }
        do { return try result.get() } catch { throw error.userError }
    }

    /// Whether a slice may go on in its transaction: no other write waits for the writer (and
    /// no test asked for slices of a fixed size). Another process's writer is not seen: it waits
    /// on the file's lock, as it did for the single merge. (Committing after at most 1 or 3 s
    /// regardless cost 2.5 s of 16 at 330,000 entries: each commit then waited for a checkpoint.)
    private var nobodyWaits: Bool { options.mergeSliceRows == nil && !(writer?.othersWaiting ?? false) }

    /// Runs one slice on the writer in its turn at the bulk gate.
    private func sliceTurn<T: Sendable>(
        _ body: @escaping @Sendable (SQLiteConnection) throws(SQLiteError) -> T,
        committed: @escaping @Sendable (T) -> CommitNotice?
    ) async throws(UserError) -> T {
        await bulkGate.enter()
        await checkpointer?.makeRoom()
        let result: Result<T, UserError>
        let normal = options.synchronous.rawValue
        do throws(UserError) {
            result = .success(try await write({ connection throws(SQLiteError) -> T in
                // Not synced one by one, as staged chunks are not: each slice commits with its
                // mark, the WAL keeps commits in order, and the next FULL commit (any save) syncs
                // them; a slice lost to a power cut takes its mark with it and is merged again.
                try connection.execute("PRAGMA synchronous = NORMAL", SQLiteImportMerge.operation)
                defer { _ = try? connection.execute("PRAGMA synchronous = \(normal)", SQLiteImportMerge.operation) }
                return try body(connection)
            }, committed: committed))
        } catch {
            result = .failure(error)
        }
        await bulkGate.leave()
        return try result.get()
    }

    /// The next step's rows: scaled towards `mergeSliceTarget` from the time since `start`
    /// (`DispatchTime` nanoseconds) that the last one took, and grown by a quarter at most
    /// (doubling overshot: slices of 50-95 ms).
    static func nextSliceRows(_ rows: Int, since start: UInt64, range: ClosedRange<Int>) -> Int {
        nextSliceRows(rows, took: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, range: range)
    }

    static func nextSliceRows(_ rows: Int, took seconds: Double, range: ClosedRange<Int>) -> Int {
        let scaled = Double(rows) * mergeSliceTarget / max(seconds, 0.000_1)
        return min(max(Int(scaled.rounded()), range.lowerBound, rows / 2), range.upperBound, rows + rows / 4)
    }

    /// Sorts and fills (`sortAndFill`, on the writer) while the checks run beside it, on the
    /// other core: they read only `import_staged` and `users`. The guard is whole only once the
    /// fill ends, so a write committed after the checks began may have slipped past it: then
    /// they run again. The change log's last `seq` tells, as every write to `users` but a merge's
    /// slices (which `mergeTurns` keeps apart from this) adds a row to it in its transaction.
    private func sortFillAndCheck(_ id: Int) async throws(UserError) -> UserError? {
        async let checked = checkApart(id)
        if let pause = options.afterImportChecks {
            _ = await checked
            await pause()
        }
        let filled: Result<Void, UserError>
        do throws(UserError) {
            try await sortAndFill(id)
            filled = .success(())
        } catch {
            filled = .failure(error)
        }
        let first = await checked
        try filled.get()
        let (refusal, seen) = try first.get()
        let now = try read { connection throws(SQLiteError) -> Int in
            try SQLiteImportValidation.lastChange(connection)
        }
        return now == seen ? refusal : try await checkApart(id).get().refusal
    }

    /// The checks (`SQLiteImportValidation`) on a read connection of their own, off the writer
    /// and off the reader the sessions share (at 330,000 entries they take half a second), with
    /// the change log's last `seq` they saw.
    private func checkApart(_ id: Int) async -> Result<(refusal: UserError?, lastChange: Int), UserError> {
        let path = self.path
        do throws(UserError) {
            return .success(try await apart { () throws(SQLiteError) -> (refusal: UserError?, lastChange: Int) in
                let connection = try SQLiteConnection(path: path, mode: .readOnly, busyTimeoutMilliseconds: 5_000)
                // Sorts past the page cache go to files rather than into the daemon's memory.
                try connection.execute("PRAGMA temp_store = FILE", SQLiteImportMerge.operation)
                return try connection.readTransaction(SQLiteImportMerge.operation) {
                    () throws(SQLiteError) -> (refusal: UserError?, lastChange: Int) in
                    let seen = try SQLiteImportValidation.lastChange(connection)
                    return (try SQLiteImportValidation.refusal(id, connection), seen)
                }
            })
        } catch {
            return .failure(error)
        }
    }

    /// `write` for a single user's save, add or removal: one that meets an import's guard
    /// (`SQLiteImportGuard`) waits for this process's merge to end and runs again, so it is
    /// applied after the import, as if the import had been one transaction. With no merge
    /// running here (another process's, or one a failure left for the next open), it is refused.
    func guardedWrite<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws(SQLiteError) -> T,
                                   committed: @escaping @Sendable (T) -> CommitNotice?) async throws(UserError) -> T {
        var retried = false
        while true {
            let attempt = try await write({ connection throws(SQLiteError) -> T? in
                do throws(SQLiteError) { return try body(connection) } catch where error.isImportGuard { return nil }
            }, committed: { value in value.flatMap(committed) })
            if let attempt { return attempt }
            // The merge may have ended between the refusal and this check: one more try.
            if await importMergeEnded() || !retried {
                retried = true
                continue
            }
            throw .unavailable(reason: "an import committed to \(path) is still being merged and holds this user "
                               + "or address (the daemon finishes it when it next opens the store); "
                               + "nothing was written")
        }
    }

    /// The guard is gone (the last slice, or a refusal, committed) or the merge gave up: the
    /// writes waiting for it run again.
    private func guardLifted() {
        let waiting = importMerge.withLock { state in
            state.running = false
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Waits for this process's merge to end; false at once when none runs.
    private func importMergeEnded() async -> Bool {
        guard importMerge.withLock({ $0.running }) else { return false }
        await withCheckedContinuation { continuation in
            let now = importMerge.withLock { state -> Bool in
                guard state.running else { return true }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() } else { options.whenAWriteWaitsForTheMerge?() }
        }
        return true
    }
}
