import Synchronization

/// Where the writes made while it is current landed in the store's change log.
///
/// A caller that must know when the change feed has delivered its own writes (the daemon's
/// session: its reply waits until its write is on its screens, and the feed's copy is told apart
/// from other people's changes) makes one, runs the writes with it as `current`, and reads the
/// `seq` range back. A store that logs its changes records each commit's `seq` here before any
/// feed can deliver that commit; a store with no log records nothing.
///
/// A task-local rather than a return value: the writes happen several layers down (a ViewModel,
/// a use case, a cache over the store), none of which has any business with change-log positions.
public final class CommitReceipt: Sendable {
    @TaskLocal public static var current: CommitReceipt?

    private let first = Atomic<Int>(0)
    private let last = Atomic<Int>(0)

    public init() {}

    /// Records a committed change-log `seq` (positions are positive). Called by the store,
    /// before the commit is handed to its feed.
    public func record(_ seq: Int) {
        guard seq > 0 else { return }
        _ = first.compareExchange(expected: 0, desired: seq, ordering: .sequentiallyConsistent)
        _ = last.max(seq, ordering: .sequentiallyConsistent)
    }

    /// The positions recorded so far; nil while none is (nothing committed, or a store without a log).
    public var seqs: ClosedRange<Int>? {
        let first = first.load(ordering: .sequentiallyConsistent)
        let last = last.load(ordering: .sequentiallyConsistent)
        guard first > 0, last >= first else { return nil }
        return first...last
    }

    /// Whether the change logged at `seq` is one of these writes.
    public func covers(_ seq: Int) -> Bool { seqs?.contains(seq) ?? false }
}
