import Foundation
import UserListDomain
import UserListPresentation
import UserListWire

/// A session's own writes: the feed's copies of their changes are recognised (applied without
/// a `changed` event), and a write's reply waits until its change is on the session's screens.
extension Session {
    /// Which user a write will change.
    enum WriteTarget {
        case added(UUID), saved(UUID), removed(UUID)
        var id: UUID {
            switch self { case .added(let id), .saved(let id), .removed(let id): id }
        }
    }

    /// Runs one write and returns once its change is on this session's screens (and so in the
    /// patches flushed before the reply): normally when the feed delivers it, at worst after a
    /// bounded wait, when the session applies it itself.
    func write(_ target: WriteTarget,
                       _ body: (isolated Session) async -> Result<(JSONValue?, UserChange), UserError>) async -> Result<JSONValue?, IntentError> {
        let write = expectOwnChange(of: [target.id])
        switch await body(self) {
        case .success(let (result, change)):
            if !(await awaitDeliveries(of: write, count: 1)) {
                navigator.apply(change, madeHere: true)
            }
            await navigator.topHistory?.settle()  // an open history shows the write's entry before the reply
            return .success(result)
        case .failure(let error):
            forget(write)
            return .failure(IntentError(error))
        }
    }

    /// A write this session is about to make, registered before it starts so the feed's copy
    /// of its change, whenever it comes, is recognised.
    final class OwnWrite {
        let number: Int
        let ids: Set<UUID>
        let started = ContinuousClock.now
        var seen = 0
        /// How many changes the write made, once known.
        var expected: Int?
        var waiter: CheckedContinuation<Bool, Never>?
        init(number: Int, ids: Set<UUID>) {
            self.number = number
            self.ids = ids
        }
        var complete: Bool { expected.map { seen >= $0 } ?? false }
    }

    /// Registers a write; returns its number.
    func expectOwnChange(of ids: Set<UUID>) -> Int {
        ownWriteCount += 1
        ownWrites.append(OwnWrite(number: ownWriteCount, ids: ids))
        return ownWriteCount
    }

    func ownWrite(_ number: Int) -> OwnWrite? { ownWrites.first { $0.number == number } }

    func forget(_ number: Int) {
        guard let write = ownWrite(number) else { return }
        ownWrites.removeAll { $0 === write }
        write.waiter?.resume(returning: false)
        write.waiter = nil
    }

    /// Whether `change` is one of this session's own writes (and counts it).
    func claimOwnChange(_ change: UserChange) -> Bool {
        let now = ContinuousClock.now
        ownWrites.removeAll { $0.waiter == nil && now - $0.started > .seconds(60) }  // the feed lost it
        guard let id = change.userID, let write = ownWrites.first(where: { $0.ids.contains(id) && !$0.complete }) else { return false }
        write.seen += 1
        if write.complete {
            ownWrites.removeAll { $0 === write }
            write.waiter?.resume(returning: true)
            write.waiter = nil
        }
        return true
    }

    /// Waits until the feed has delivered `count` changes of `write` (at most a few seconds);
    /// returns whether it did.
    func awaitDeliveries(of number: Int, count: Int) async -> Bool {
        // A store whose feed delivers on the writer's thread (SQLite) has queued the change for
        // this loop before the write returned: apply it now rather than wait for the loop's job.
        changes.feed(for: loop).deliverQueued()
        guard let write = ownWrite(number) else { return false }
        write.expected = count
        if write.complete {
            ownWrites.removeAll { $0 === write }
            return true
        }
        let delivered = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            // Entering `withCheckedContinuation` may suspend, and the last delivery may have
            // come meanwhile (it found no waiter to resume): then this is already done.
            if write.complete {
                continuation.resume(returning: true)
                return
            }
            write.waiter = continuation
            Task { [weak self] in
                try? await Task.sleep(for: .seconds(5))
                await self?.giveUp(on: number)
            }
        }
        return delivered
    }

    func giveUp(on number: Int) {
        // Kept in `ownWrites`: a late delivery is still this session's own (pruned after a minute).
        guard let write = ownWrite(number), let waiter = write.waiter else { return }
        write.waiter = nil
        waiter.resume(returning: false)
    }
}
