import Foundation
import UserListDomain
import UserListPresentation
import UserListWire

/// A session's own writes. Each runs with a `CommitReceipt`, in which the store records the
/// change-log `seq` of what it committed before its feed can deliver it: the feed's copies of
/// those changes are recognised by `seq` (applied without a `changed` event), and the write's
/// reply waits until the feed has delivered through its last `seq`, so its change is on the
/// session's screens and in the patches flushed before the reply. No timers: the feed delivers
/// every `seq` in order (or `.resync` in place of ones it lost).
extension Session {
    /// Runs one write and returns once its change is on this session's screens.
    /// `body` returns the reply's result and the change it made, if it made one change (an
    /// import makes many, and leaves them to the feed).
    func write(_ body: (isolated Session) async -> Result<(JSONValue?, UserChange?),
               UserError>) async -> Result<JSONValue?, IntentError> {
        let receipt = beginWrite()
        defer { endWrite(receipt) }
        let outcome = await CommitReceipt.$current.withValue(receipt) { await body(self) }
        switch outcome {
        case .success(let (result, change)):
            await settle(receipt, orApply: change)
            return .success(result)
        case .failure(let error):
            return .failure(IntentError(error))
        }
    }

    /// Returns once what a committed write recorded in `receipt` is on this session's screens,
    /// and on an open history screen (its entry shows before the reply).
    func settle(_ receipt: CommitReceipt, orApply change: UserChange?) async {
        await awaitOwnChanges(of: receipt, orApply: change)
        await navigator.topHistory?.settle()
    }

    /// A write this session is about to make: changes logged under the returned receipt are its own.
    func beginWrite() -> CommitReceipt {
        let receipt = CommitReceipt()
        writesInFlight.append(receipt)
        return receipt
    }

    func endWrite(_ receipt: CommitReceipt) {
        writesInFlight.removeAll { $0 === receipt }
    }

    /// Returns once the feed has applied every change `receipt` recorded to this loop's
    /// sessions. A store that logs nothing recorded nothing: then `change`, if any, is applied here.
    func awaitOwnChanges(of receipt: CommitReceipt, orApply change: UserChange?) async {
        guard let seqs = receipt.seqs else {
            if let change { navigator.apply(change, madeHere: true) }
            return
        }
        await changes.feed(for: loop).delivered(through: seqs.upperBound)
    }

    /// Whether the feed's `delivery` is the change of a write this session is making.
    func isOwnChange(_ delivery: ChangeBroadcaster.Delivery) -> Bool {
        writesInFlight.contains { $0.covers(delivery.seq) }
    }
}
