import Foundation
import Synchronization
import ThreadLocks
import UserListWire

/// The read path, on the connection's loop, as stages: decoding (`InboundDecoder`), admission
/// (the client's and its uid's message windows, the uid's unfinished-frame budget, the frame
/// deadline), liveness (`Liveness`, which the sweep reads) and routing (answer here before
/// hello, else queue in order for the session's task).
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
        while !readPath.value.admission.heldBack, let decoded = readPath.value.decoder.next() {
            switch decoded {
            case .badFrame(let error):
                sendError(error.errorCode, error.description)
                if error.isFatal || error.errorCode.isFatal {
                    connection.closeAfterFlush()
                    return
                }
            case .badMessage(let error):
                completedFrame = true
                if phase.withLock({ $0.acceptsQueuedWork }) {
                    enqueue(.error(error.code, error.message, id: error.intentID))
                } else {
                    sendError(error.code, error.message, id: error.intentID)
                }
            case .message(let message):
                completedFrame = true
                route(message)
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
                              heldBack: readPath.value.admission.heldBack, at: now)
        guard let delta = readPath.value.admission.partialBytesDelta(buffered: buffered) else { return }
        if !context.registry.adjustPartialBytes(uid: connection.peer.uid, by: delta) {
            sendError(.inputLimit,
                      "Unfinished frames from uid \(connection.peer.uid) hold more than "
                        + "\(context.config.maxPartialBytesPerUID) bytes; finish or close some connections.")
        }
    }

    /// Before hello nothing is queued, so answers go straight out; after it, everything goes
    /// through the ordered inbox so replies, errors and pongs leave in the order asked.
    private func route(_ message: ClientMessage) {
        let phase = self.phase.withLock { $0 }
        guard phase.acceptsQueuedWork else {
            routeBeforeHello(message)
            return
        }
        switch message {
        case .bye:
            enqueue(.bye)
            return
        case .pong:
            return  // the answer to our ping: hearing it was the point
        default:
            break
        }
        guard admit() else {
            let text = "Too many messages: at most \(context.config.intentsPerSecond) per second per client."
            if case .intent(let intent) = message {
                unanswered.add(1, ordering: .relaxed)
                enqueue(.refused(id: intent.id, .rateLimited, text))  // every intent gets its one reply
            } else {
                enqueue(.error(.rateLimited, text, id: nil))
            }
            return
        }
        switch message {
        case .hello: enqueue(.duplicateHello)
        case .intent(let intent):
            unanswered.add(1, ordering: .relaxed)
            if let session = sessionTakingIntentsInPlace(phase) {
                guard let decoded = decodeForSession(intent, session: session) else { return }
                Self.enterInPlace(session) { $0.handle(intent, decoded: decoded, from: self) }
            } else {
                enqueue(.intent(intent))
            }
        case .ping(let nonce): enqueue(.ping(nonce: nonce))
        case .resync: enqueue(.resync)
        case .bye: enqueue(.bye)
        case .pong: break
        }
    }

    /// The session, when an intent may enter it straight from this read, with no queue: it
    /// lives on this loop (this is its thread) and nothing the client sent before is queued or
    /// still being handled, so the order the client sent things in is kept. Otherwise (a
    /// session on another loop, an attach under way, a backlog) the intent takes the inbox.
    private func sessionTakingIntentsInPlace(_ phase: Phase) -> Session? {
        guard pending.load(ordering: .relaxed) == 0, !itemInFlight.load(ordering: .relaxed),
              case .attached(let session) = phase, session.loop === connection.loop
        else { return nil }
        return session
    }

    private func routeBeforeHello(_ message: ClientMessage) {
        switch message {
        case .ping, .resync, .bye:
            sendError(.notReady, "Say hello first: nothing but hello is answered before the handshake.")
        case .hello(let hello):
            guard ProtocolVersion.negotiate(client: hello.protocolVersions) != nil else {
                sendError(.unsupportedVersion, ProtocolVersion.mismatchMessage(client: hello.protocolVersions))
                return
            }
            phase.withLock { $0 = .attaching }
            enqueue(.hello(hello))
        case .intent(let intent):
            sendError(.notReady, "Say hello first: intents are only accepted after the handshake.", id: intent.id)
        case .pong:
            break
        }
    }

    /// Admission of one message after hello: the uid's shared window (which holds the whole
    /// connection back, nothing dropped) and the client's own (past which it is refused).
    private func admit() -> Bool {
        if let windowEnd = context.registry.chargeMessage(uid: connection.peer.uid, now: MonotonicClock.nanoseconds()) {
            holdBack(until: windowEnd)
        }
        return readPath.value.admission.admitMessage()
    }

    /// The uid used its share for this second: stop reading this connection until the window
    /// ends, then carry on with the frames already read (nothing is dropped).
    private func holdBack(until windowEnd: Int64) {
        guard !readPath.value.admission.heldBack else { return }
        readPath.value.admission.heldBack = true
        connection.setReadingPaused(true, because: .uidBudget)
        let wait = max(0, windowEnd - MonotonicClock.nanoseconds())
        connection.onLoop(after: .nanoseconds(wait)) { [weak self] in self?.resumeAfterHoldBack() }
    }

    private func resumeAfterHoldBack() {
        readPath.value.admission.heldBack = false
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
