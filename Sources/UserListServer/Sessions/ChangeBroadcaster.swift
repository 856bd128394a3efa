import Foundation
import Synchronization
import UserListDomain
import UserListWire

/// The daemon's one subscription to the Domain's change feed, passed on to every session with
/// the `changed` event frame already encoded.
///
/// Every session sends the same bytes for the same change; encoding them once here, rather than
/// in each of a thousand sessions, is most of what a fan-out costs beyond the writes. Sessions
/// receive on their own streams and apply the change on their own actors; nothing here waits
/// for any of them.
package final class ChangeBroadcaster: Sendable {
    package struct Delivery: Sendable {
        package let change: UserChange
        /// The `session`/`changed` event frame for `change` (nil for `.resync`: sessions reload,
        /// and their clients see the outcome as an ordinary patch).
        package let eventFrame: [UInt8]?
    }

    private let subscribers = Mutex<[UInt64: AsyncStream<Delivery>.Continuation]>([:])
    private let nextID = Atomic<UInt64>(0)
    private let pump = Mutex<Task<Void, Never>?>(nil)

    package init(feed: any UserChangeFeed) {
        let changes = feed.subscribe()
        let encoder = FrameEncoder(maximumFrameSize: FrameLimits.serverToClient)
        let task = Task.detached { [weak self] in
            for await change in changes {
                guard let self else { return }
                let frame = Self.event(for: change).flatMap { try? encoder.encode(ServerMessage.event($0)) }
                self.deliver(Delivery(change: change, eventFrame: frame))
            }
        }
        pump.withLock { $0 = task }
    }

    deinit { pump.withLock { $0?.cancel() } }

    /// Every change committed from now on, in commit order, until the stream is dropped.
    package func subscribe() -> AsyncStream<Delivery> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream.makeStream(of: Delivery.self, bufferingPolicy: .unbounded)
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    /// Yields outside the lock: a stream that ends runs `onTermination` under its own lock and
    /// then takes `subscribers`, so yielding under `subscribers` would take the two in the
    /// opposite order (a deadlock seen with sessions coming and going during renames).
    private func deliver(_ delivery: Delivery) {
        let current = subscribers.withLock { Array($0.values) }
        for continuation in current { continuation.yield(delivery) }
    }

    /// How many streams are subscribed (tests: every dropped subscriber is forgotten).
    package var subscriberCount: Int { subscribers.withLock { $0.count } }

    /// The `changed` event telling clients of `change`; nil for `.resync`, which has no event
    /// of its own in the protocol.
    package static func event(for change: UserChange) -> ServerMessage.Event? {
        guard let id = change.userID else { return nil }
        var payload: [String: JSONValue] = ["id": .string(id.uuidString.lowercased())]
        switch change {
        case .saved(let user): payload["kind"] = "saved"; payload["user"] = StateDocument.user(user)
        case .added(let user): payload["kind"] = "added"; payload["user"] = StateDocument.user(user)
        case .removed: payload["kind"] = "removed"
        case .resync: return nil
        }
        return .init(screen: "session", name: "changed", payload: .object(payload))
    }
}
