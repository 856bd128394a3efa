import Foundation
import Synchronization
import UserListData
import UserListDomain

/// The store's own read of the page the next-page round trip brings (#15's target for it is
/// "≤ 3x raw + the SQLite query"): `fetchPage` after the first page's cursor, 50 users, on a
/// read-only connection of its own to the daemon's database, in the same run. The daemon in the
/// round trip may serve that page from its shared page cache; this is what a read costs when it
/// does not.
enum PageQueryBaseline {
    static func run(database: String, rounds: Int) throws(BenchError) -> Samples {
        let outcome = Mutex<Result<Samples, BenchError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let result: Result<Samples, BenchError>
            do throws(UserError) {
                result = .success(try await measure(database: database, rounds: rounds))
            } catch {
                result = .failure(BenchError("the page query baseline failed: \(error.message)"))
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    private static func measure(database: String, rounds: Int) async throws(UserError) -> Samples {
        let store = try SQLiteUserRepository(path: database, options: .init(readOnly: true))
        let first = try await store.fetchPage(PageRequest(limit: 50))
        let next = PageRequest(after: first.next, limit: 50)
        for _ in 0..<20 { _ = try await store.fetchPage(next) }
        var samples = Samples()
        var smallest = Int.max
        for _ in 0..<rounds {
            let start = monotonicNanos()
            let page = try await store.fetchPage(next)
            samples.append(monotonicNanos() - start)
            smallest = min(smallest, page.users.count)
        }
        // The bench's store has 1,000 users: a page short of 50 would be a cheaper read.
        guard smallest == 50 else { throw .unavailable(reason: "the next page had \(smallest) users, not 50") }
        return samples
    }
}
