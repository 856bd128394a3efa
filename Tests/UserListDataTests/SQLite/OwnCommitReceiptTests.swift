import Dispatch
import Foundation
import Synchronization
import Testing
@testable import UserListData
import UserListDomain
import ThreadLocks
import UserListTestSupport

/// A write's own commit reaches the feed's subscribers only once the write's receipt holds its
/// `seq`: the daemon's session tells its own changes from other people's by that receipt, and
/// one taken for someone else's is announced to its client as a `changed` event and marks its
/// list stale (seen under load as a replay of Protocol/examples/session.jsonl going wrong).
@Suite(.serialized) struct OwnCommitReceiptTests {
    /// The watcher's check, run at the worst moment (the write committed, its receipt and the
    /// feed not yet told), delivers nothing; the writer then delivers the change, covered.
    @Test func theWatcherDoesNotDeliverAnOwnCommitBeforeItsReceiptHasIt() async throws {
        let directory = try TemporaryDirectory()
        let armed = Atomic<Bool>(false)
        let committed = DispatchSemaphore(value: 0), resume = DispatchSemaphore(value: 0)
        var options = SQLiteUserRepository.Options()
        options.afterCommit = {
            guard armed.exchange(false, ordering: .sequentiallyConsistent) else { return }
            committed.signal()
            resume.wait()
        }
        let store = try SQLiteUserRepository(path: directory.file("users.sqlite"), options: options)
        let feed = try SQLiteChangeFeed(observing: store, safetyInterval: .seconds(600))
        let receipt = CommitReceipt()
        let deliveries = Lock<[(seq: Int, covered: Bool)]>([])
        let observation = feed.observe { change in
            deliveries.withLock { $0.append((change.seq, receipt.covers(change.seq))) }
        }
        defer { observation.cancel() }

        armed.store(true, ordering: .sequentiallyConsistent)
        let write = Task {
            try await CommitReceipt.$current.withValue(receipt) {
                try await store.add(NewUser(name: "Ada", email: "ada@example.com"))
            }
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                committed.wait()
                feed.checkForOtherCommits()  // as the watcher would, woken by the commit's writes
                resume.signal()
                done.resume()
            }
        }
        _ = try await write.value

        let seen = deliveries.withLock { $0 }
        #expect(seen.count == 1 && seen.first?.covered == true, "\(seen)")
        #expect(receipt.seqs != nil)
    }
}
