import Foundation
import Synchronization
import ThreadLocks
import UserListWire

/// The read path, on the connection's loop: each message decoded (`InboundDecoder`), admitted
/// (`Admission`, `UIDHoldBack`) and routed (`MessageRouter`), and what the router decided done.
extension ClientHandler {
    // MARK: ConnectionDelegate (event loop thread)

    package func connection(_ connection: Connection, received bytes: UnsafeRawBufferPointer) {
        let now = MonotonicClock.nanoseconds()
        liveness.heard(at: now)
        readPath.value.decoder.feed(bytes)
        processBufferedFrames(now: now)
    }

    /// Routes every complete message in the decoder, unless the uid's share runs out on the way.
    func processBufferedFrames(now: Int64) {
        var completedFrame = false
        defer { trackPartialFrame(now: now, completedFrame: completedFrame) }
        while !readPath.value.holdBack.isHolding, let decoded = readPath.value.decoder.next() {
            switch decoded {
            case .badFrame(let error):
                sendError(error.errorCode, error.description)
                if error.isFatal || error.errorCode.isFatal {
                    connection.closeAfterFlush()
                    return
                }
            case .badMessage(let error):
                completedFrame = true
                let phase = self.phase.withLock { $0 }
                follow(MessageRouter.route(error, phase: phase), phase: phase)
            case .message(let message):
                completedFrame = true
                let phase = self.phase.withLock { $0 }
                follow(MessageRouter.route(message, phase: phase, admit: { admit() }), phase: phase)
            }
        }
    }

    /// Starts the frame deadline when a frame begins, and keeps the uid's partial-frame memory
    /// within its budget: past it, this connection is closed (`input_limit`).
    private func trackPartialFrame(now: Int64, completedFrame: Bool) {
        let buffered = connection.isClosed ? 0 : readPath.value.decoder.bufferedByteCount
        // Held back by the uid's share, the buffered frames wait for the daemon, not for the
        // client: no deadline runs (reading is paused; it starts again on resuming).
        liveness.partialFrame(buffered: buffered > 0, completedFrame: completedFrame,
                              heldBack: readPath.value.holdBack.isHolding, at: now)
        guard let delta = readPath.value.admission.partialBytesDelta(buffered: buffered) else { return }
        if !context.registry.adjustPartialBytes(uid: connection.peer.uid, by: delta) {
            sendError(.inputLimit,
                      "Unfinished frames from uid \(connection.peer.uid) hold more than "
                        + "\(context.config.maxPartialBytesPerUID) bytes; finish or close some connections.")
        }
    }

    /// Does what the router decided; `phase` is the one it routed by.
    private func follow(_ route: MessageRouter.Route, phase: ConnectionPhase) {
        switch route {
        case .ignore:
            break
        case .answer(let code, let message, let id):
            sendError(code, message, id: id)
        case .attach(let hello):
            self.phase.withLock { $0 = .attaching }
            enqueue(.hello(hello))
        case .queue(let item):
            enqueue(item)
        case .rateLimited(let intentID):
            if intentID != nil { unanswered.add(1, ordering: .relaxed) }
            enqueue(MessageRouter.refusal(intentID: intentID, limit: context.config.intentsPerSecond))
        case .intent(let intent):
            unanswered.add(1, ordering: .relaxed)
            // Nothing before it waits: not the client's earlier messages, nor the loop's jobs (a
            // change or another session's presence published here before this intent was read).
            let inboxIdle = pending.load(ordering: .acquiring) == 0 && !itemInFlight.load(ordering: .acquiring)
                && !connection.loop.hasQueuedJobs
            if let session = MessageRouter.sessionTakingIntentsInPlace(phase, inboxIdle: inboxIdle,
                                                                       loop: connection.loop) {
                guard let decoded = forSession(intent, session: session) else { return }
                session.enterOnLoop { $0.handle(intent, decoded: decoded, from: self) }
            } else {
                enqueue(.intent(intent))
            }
        }
    }

    /// Admission of one message after hello: the uid's shared window (which holds the whole
    /// connection back, nothing dropped) and the client's own (past which it is refused).
    private func admit() -> Bool {
        let now = MonotonicClock.nanoseconds()
        if let windowEnd = context.registry.chargeMessage(uid: connection.peer.uid, now: now),
           let wait = readPath.value.holdBack.hold(until: windowEnd, now: now) {
            connection.setReadingPaused(true, because: .uidBudget)
            connection.onLoop(after: wait) { [weak self] in self?.resumeAfterHoldBack() }
        }
        return readPath.value.admission.admitMessage()
    }

    /// The uid's window ended: read again, carrying on with the frames already read.
    private func resumeAfterHoldBack() {
        readPath.value.holdBack.release()
        connection.setReadingPaused(false, because: .uidBudget)
        processBufferedFrames(now: MonotonicClock.nanoseconds())
    }

    // MARK: the sweep (another thread)

    /// Closes a connection whose frame did not complete within the frame deadline of its first
    /// byte (a trickled frame would otherwise hold its buffer forever).
    package func checkFrameDeadline(now: Int64, timeoutNanoseconds timeout: Int64) {
        guard liveness.frameDeadlinePassed(at: now, timeout: timeout), !connection.isClosed else { return }
        sendError(.frameTimeout,
                  "A frame did not complete within \(context.config.frameTimeoutSeconds) seconds of its first byte.")
    }

    /// Pings a client silent for an interval; closes one that has not answered a ping within
    /// another interval.
    package func checkLiveness(now: Int64, intervalNanoseconds interval: Int64) {
        switch liveness.check(at: now, interval: interval) {
        case .alive:
            break
        case .ping:
            send(.ping(nonce: .int(now)), droppable: false)
        case .gone:
            send(.goodbye(reason: "idle_timeout"), droppable: false)
            connection.closeAfterFlush()
        }
    }
}
