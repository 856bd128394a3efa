import Synchronization
import UserListPresentation
import UserListWire
import ThreadLocks

/// Changes on their way to one session, and who sends them.
///
/// Normally the session does: the broadcaster's thread queues each change here, and a post that
/// finds the queue idle starts one task that brings the session onto its actor to take all that
/// is waiting (`take()`), so while a session is busy its changes pile up and go out together.
///
/// While the session is idle and shows nothing but its list (no load, save or other intent in
/// flight, every client in step), it hands its list and its clients' streams to the feed
/// (`follow(_:)`). Then the broadcaster's thread advances the list itself (`UserListFollower`,
/// the ViewModel's own rule, computed once per distinct list) and writes each client its patch
/// and the `changed` event at once: no hop onto the session's actor, which is most of what a
/// fan-out to a thousand sessions cost. The session takes its screens back (`reclaim()`) before
/// it does anything else, and its ViewModel then takes the state that was sent.
///
/// One lock orders the two: a change goes either to the queue or to the clients, and never to
/// the clients while anything is queued, so each client sees changes in commit order.
final class SessionFeed: Sendable {
    /// A client's stream while the feed writes it.
    struct Stream: Sendable {
        let key: ObjectIdentifier
        let client: any SessionClient
        let epoch: Int
        var seq: Int
    }

    /// What an idle session hands over.
    struct Following: Sendable {
        /// The list as its clients now have it.
        var list: UserListFollower
        var streams: [Stream]
    }

    private struct State {
        var pending: [ChangeBroadcaster.Delivery] = []
        /// A wake-up task is on its way.
        var wakeScheduled = false
        var following: Following?
    }

    private let state = Lock(State())
    /// How many changes the broadcaster sent itself (tests and diagnostics).
    let sentByBroadcaster = Atomic<Int>(0)
    /// Starts a task that brings the session onto its actor to `take()`.
    private let wake: @Sendable () -> Void

    init(wake: @escaping @Sendable () -> Void) {
        self.wake = wake
    }

    // MARK: the broadcaster's side

    /// Queues `delivery` for the session, unless the session handed its list over: then, with
    /// `sending`, the change is applied and written to its clients here, and without, it is left
    /// for a second call (so queued sessions start working before the writes). Returns whether
    /// the delivery was taken.
    func offer(_ delivery: ChangeBroadcaster.Delivery, sending: Bool, encoder: FrameEncoder) -> Bool {
        enum Outcome { case left, queued(wake: Bool), sent }
        let outcome = state.withLock { state -> Outcome in
            if state.following != nil && state.pending.isEmpty {
                guard sending else { return .left }
                if Self.send(delivery, to: &state.following!, encoder: encoder) { return .sent }
            }
            state.pending.append(delivery)
            guard !state.wakeScheduled else { return .queued(wake: false) }
            state.wakeScheduled = true
            return .queued(wake: true)
        }
        switch outcome {
        case .left: return false
        case .queued(let wake):
            if wake { self.wake() }
        case .sent:
            sentByBroadcaster.add(1, ordering: .relaxed)
        }
        return true
    }

    /// Applies `delivery` to the list and writes every client its patch and the event, under the
    /// lock (so no later frame of the session's overtakes them). False, having written nothing,
    /// when the session must apply it itself.
    private static func send(_ delivery: ChangeBroadcaster.Delivery, to following: inout Following, encoder: FrameEncoder) -> Bool {
        guard let event = delivery.eventFrame,
              let next = following.list.following(delivery.change, sharing: delivery.lists) else { return false }
        guard !following.streams.isEmpty else {
            following.list = next  // nobody to write to (all detached): the list still follows
            return true
        }
        let ops = delivery.patches.operations(fromList: following.list.state, toList: next.state)
        let eventFrame = OutgoingFrame(event)
        // A patch near the frame limit goes by the session, which reports one it cannot send
        // (the envelope is under 100 bytes: two integers and the keys).
        if ops.count + 100 > encoder.maximumFrameSize { return false }
        for index in following.streams.indices {
            let stream = following.streams[index]
            guard !ops.isEmpty else {
                stream.client.sendFrames([(eventFrame, false)])
                continue
            }
            following.streams[index].seq += 1
            guard let patch = try? encoder.patchFrame(epoch: stream.epoch, seq: stream.seq + 1, serializedOperations: ops) else {
                preconditionFailure("a patch checked against the frame limit above did not fit it")
            }
            stream.client.sendFrames([(patch, true), (eventFrame, false)])  // events are never dropped (§7)
        }
        following.list = next
        return true
    }

    // MARK: the session's side (on its actor)

    /// Everything queued, oldest first.
    func take() -> [ChangeBroadcaster.Delivery] {
        state.withLock { state in
            state.wakeScheduled = false
            guard !state.pending.isEmpty else { return [] }
            defer { state.pending.removeAll(keepingCapacity: true) }
            return state.pending
        }
    }

    /// Hands the list and the clients' streams to the broadcaster; not while changes are queued
    /// (the wake-up on its way makes the session take them first, and it tries again after).
    func follow(_ following: Following) {
        state.withLock { state in
            guard state.pending.isEmpty else { return }
            state.following = following
        }
    }

    /// Takes the list and the streams back: what the broadcaster sent meanwhile, or nil if the
    /// session had not handed them over.
    func reclaim() -> Following? {
        state.withLock { state in
            defer { state.following = nil }
            return state.following
        }
    }
}
