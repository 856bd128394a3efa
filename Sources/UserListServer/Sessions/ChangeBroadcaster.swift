import Foundation
import Synchronization
import UserListDomain
import UserListPresentation
import UserListWire
import ThreadLocks

/// The daemon's one subscription to the Domain's change feed, published to every event loop
/// with the `changed` event frame already encoded.
///
/// Every session sends the same bytes for the same change; encoding them once here, rather than
/// in each of a thousand sessions, is most of what a fan-out costs beyond the writes. Nothing
/// here runs session code or writes a socket: each loop's `LoopChangeFeed` queues the change and
/// its loop applies it to its own sessions, on its own thread.
///
/// Publishing runs on the thread that learned of the change (the SQLite writer, right after its
/// commit): one queue append and at most one wake-up per loop.
package final class ChangeBroadcaster: Sendable {
    /// A class: it is passed to, and kept by, thousands of sessions, and a reference is one
    /// retain where the change's strings and the frame would be several.
    package final class Delivery: Sendable {
        package let change: UserChange
        /// Its change-log position.
        package let seq: Int
        /// The `session`/`changed` event frame for `change` (nil for `.resync`: sessions reload,
        /// and their clients see the outcome as an ordinary patch).
        package let eventFrame: [UInt8]?

        init(change: UserChange, seq: Int, eventFrame: [UInt8]?) {
            self.change = change
            self.seq = seq
            self.eventFrame = eventFrame
        }
    }

    package typealias Listener = @Sendable (Delivery) -> Void

    private let listeners = Lock<[UInt64: Listener]>([:])
    private let nextID = Atomic<UInt64>(0)
    private let observation = Lock<ChangeObservation?>(nil)
    /// One per event loop, in the group's order.
    private let loopFeeds: [LoopChangeFeed]

    /// - Parameter loops: the event loops whose sessions follow the changes.
    package init(feed: any UserChangeFeed, loops: [EventLoop] = []) {
        loopFeeds = loops.map(LoopChangeFeed.init)
        let encoder = FrameEncoder(maximumFrameSize: FrameLimits.serverToClient)
        let observation = feed.observe { [weak self] committed in self?.deliver(committed, encoder) }
        self.observation.withLock { $0 = observation }
    }

    deinit {
        observation.withLock { $0?.cancel() }
    }

    /// The feed of the loop that owns a session (its executor).
    func feed(for loop: EventLoop) -> LoopChangeFeed {
        guard let feed = loopFeeds.first(where: { $0.loop === loop }) else {
            preconditionFailure("a session on an event loop the broadcaster was not given")
        }
        return feed
    }

    /// Calls `listener` with every change committed from now on, in commit order, on the
    /// broadcaster's thread (it must only queue the delivery), until `detach(_:)`.
    package func attach(_ listener: @escaping Listener) -> UInt64 {
        let id = nextID.add(1, ordering: .relaxed).newValue
        listeners.withLock { $0[id] = listener }
        return id
    }

    package func detach(_ id: UInt64) {
        _ = listeners.withLock { $0.removeValue(forKey: id) }
    }

    /// Calls listeners outside the lock: a listener may attach or detach (its own or another)
    /// from inside the call, which takes `listeners` again.
    private func deliver(_ committed: CommittedChange, _ encoder: FrameEncoder) {
        let current = listeners.withLock { Array($0.values) }
        let frame = Self.event(for: committed.change).flatMap { try? encoder.encode(ServerMessage.event($0)) }
        let delivery = Delivery(change: committed.change, seq: committed.seq, eventFrame: frame)
        for listener in current { listener(delivery) }
        for feed in loopFeeds { feed.publish(delivery) }
    }

    /// How many listeners are attached (tests: every detached listener is forgotten).
    package var subscriberCount: Int { listeners.withLock { $0.count } }

    /// The `changed` event telling clients of `change`; nil for `.resync`, which has no event
    /// of its own in the protocol.
    package static func event(for change: UserChange) -> ServerMessage.Event? {
        guard let id = change.userID else { return nil }
        var payload: [String: JSONValue] = ["id": .string(UUIDText.lowercase(id))]
        switch change {
        case .saved(let user): payload["kind"] = "saved"; payload["user"] = StateDocument.user(user)
        case .added(let user): payload["kind"] = "added"; payload["user"] = StateDocument.user(user)
        case .removed: payload["kind"] = "removed"
        case .resync: return nil
        }
        return .init(screen: "session", name: "changed", payload: .object(payload))
    }
}
