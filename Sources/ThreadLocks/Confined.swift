import Dispatch
import Glibc
import Synchronization

/// A value that belongs to one thread or one serial queue: only its owner may use it.
///
/// The checked form of "touched only on `queue`". A class whose state one thread owns would
/// otherwise be `@unchecked Sendable` on a comment's word; with its state in here, every
/// access checks that the caller runs on the owner, in release builds too (`precondition`), so
/// a use off the owner stops the process rather than racing. The event loops' own form of it
/// is `LoopBound`.
public final class Confined<Value>: @unchecked Sendable {
    /// Who may use the value.
    public enum Owner {
        /// The jobs of a `JobThread`.
        case thread(JobThread)
        /// The jobs of a serial `DispatchQueue`.
        case queue(DispatchQueue)
        /// The thread that uses it first (a thread started for one loop, which owns the value
        /// from its first access on).
        case firstUser
    }

    // Invariant (why @unchecked is sound): `stored` is touched only through `value` and
    // `withValue`, which check that the caller runs on the owner.
    private var stored: Value
    private let isOwner: @Sendable () -> Bool

    public init(_ value: Value, to owner: Owner) {
        stored = value
        switch owner {
        case .thread(let thread):
            isOwner = { [weak thread] in thread?.isCurrent ?? false }
        case .queue(let queue):
            let key = DispatchSpecificKey<Bool>()
            queue.setSpecific(key: key, value: true)
            isOwner = { DispatchQueue.getSpecific(key: key) == true }
        case .firstUser:
            let claimed = ClaimedThread()
            isOwner = { claimed.isCaller() }
        }
    }

    /// The value (a connection, say, to use outside the access); on the owner only.
    public var value: Value {
        precondition(isOwner(), "confined state read off its owner's thread or queue")
        return stored
    }

    /// Uses the value in place; on the owner only.
    public func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        precondition(isOwner(), "confined state used off its owner's thread or queue")
        return try body(&stored)
    }
}

/// The thread that first asked, remembered.
private final class ClaimedThread: Sendable {
    private let owner = Atomic<UInt>(0)

    /// Whether the caller is the thread that asked first (true for that first one).
    func isCaller() -> Bool {
        let caller = UInt(pthread_self())
        let (claimed, original) = owner.compareExchange(expected: 0, desired: caller, ordering: .relaxed)
        return claimed || original == caller
    }
}
