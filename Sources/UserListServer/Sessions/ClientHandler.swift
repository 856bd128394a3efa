import Foundation
import Synchronization
import UserListWire
import ThreadLocks

/// Speaks the protocol on one connection: frames and parses on the event loop thread, answers
/// what it can there (errors, pong, rate limits), and hands hello and intents, in order, to a
/// task that talks to the session's actor.
package final class ClientHandler: ConnectionDelegate, SessionClient, Sendable {
    enum Phase {
        case awaitingHello
        case attaching
        case attached(Session)
        case closed
    }

    /// Work for the ordered inbox task.
    enum Inbound: Sendable {
        case hello(ClientMessage.Hello)
        case duplicateHello
        case intent(ClientMessage.Intent)
        case ping(nonce: JSONValue?)
        case resync
        case bye
        case overflowed
        case drained
        /// An error answered in order with everything else the client sent.
        case error(ErrorCode, String, id: Int?)
        /// An intent answered with a failed reply without running it.
        case refused(id: Int, ErrorCode, String)
        /// Handed over by the previous process, already attached (see `resumeAttached`).
        case adopted(Session, epoch: Int, seq: Int, state: NavigationStateBox, awaitingSnapshot: Bool)
    }

    /// Past this many unprocessed items the socket is no longer read (backpressure, nothing dropped).
    private static let inboxHighWater = 256
    private static let inboxLowWater = 64

    package let connection: Connection
    let context: ServerContext
    let phase = Lock(Phase.awaitingHello)
    /// What only the connection's loop touches: the frame decoder and the read path's limits.
    private struct ReadPath {
        var decoder: FrameDecoder
        var rateWindow: (start: ContinuousClock.Instant, count: Int) = (.now, 0)
        /// Partial-frame bytes this connection has counted against its uid's budget.
        var countedPartialBytes = 0
        /// The uid used its share of messages for this second: frames wait in the decoder.
        var throttled = false
    }
    private let readPath: LoopBound<ReadPath>
    let inbox = OrderedInbox<Inbound>()
    private let pending = Atomic<Int>(0)
    /// Intents queued or running whose reply has not been sent (a handover waits for them).
    let unanswered = Atomic<Int>(0)
    /// When the client last sent anything, and whether it has been pinged since (liveness).
    private let lastHeard = Atomic<Int64>(MonotonicClock.nanoseconds())
    /// When the unanswered ping went out, or 0.
    private let pingedAt = Atomic<Int64>(0)
    /// When the first byte of the frame still incomplete arrived, or 0 (the frame deadline).
    private let partialSince = Atomic<Int64>(0)
    let encoder = FrameEncoder(maximumFrameSize: FrameLimits.serverToClient)

    package init(connection: Connection, context: ServerContext) {
        self.connection = connection
        self.context = context
        self.readPath = LoopBound(ReadPath(decoder: FrameDecoder(maximumFrameSize: context.config.maxFrameBytes)), on: connection.loop)
        context.liveObjects.handlers.add(1, ordering: .relaxed)
        context.opened(self)
        // On the loop that reads the connection: an intent runs where it was read.
        Task(executorPreference: connection.loop) { [self] in await self.run() }
    }

    deinit { context.liveObjects.handlers.subtract(1, ordering: .relaxed) }

    /// A connection the previous process handed over, attached to `session` at (`epoch`,
    /// `seq`) holding `state`: no hello is expected; the stream continues. Call before the
    /// connection starts reading, so the client's next frames find it attached.
    package func resumeAttached(to session: Session, epoch: Int, seq: Int, holding state: NavigationStateBox, awaitingSnapshot: Bool) {
        phase.withLock { $0 = .attached(session) }
        enqueue(.adopted(session, epoch: epoch, seq: seq, state: state, awaitingSnapshot: awaitingSnapshot))
    }

    // MARK: SessionClient

    package func send(_ message: ServerMessage, droppable: Bool) {
        if case .reply = message { unanswered.subtract(1, ordering: .relaxed) }
        do throws(FrameError) {
            connection.send(try encoder.encode(message), droppable: droppable)
        } catch {
            // Never dropped silently: logged, and the client is told what it did not get (a reply
            // keeps its id, so the intent is answered).
            context.logger.error("A server message could not be sent: \(error)", ["USERLISTD_TYPE": message.type])
            let id: Int? = if case .reply(let reply) = message { reply.id } else { nil }
            let text = "userlistd could not send a \(message.type) message (\(error)); it is logged."
            let notice: ServerMessage = id.map { .reply(.failure(id: $0, code: .internal, message: text)) }
                ?? .error(.init(code: .internal, message: text, id: nil))
            if let frame = try? encoder.encode(notice) { connection.send(frame, droppable: false) }
        }
    }

    package func sendFrames(_ frames: [(frame: OutgoingFrame, droppable: Bool)]) {
        connection.send(frames)
    }

    func sendError(_ code: ErrorCode, _ message: String, id: Int? = nil) {
        send(.error(.init(code: code, message: message, id: id)), droppable: false)
        if code.isFatal { connection.closeAfterFlush() }
    }

    // MARK: ConnectionDelegate (event loop thread)

    package func connection(_ connection: Connection, received bytes: UnsafeRawBufferPointer) {
        let now = MonotonicClock.nanoseconds()
        lastHeard.store(now, ordering: .relaxed)
        pingedAt.store(0, ordering: .relaxed)
        readPath.value.decoder.feed(bytes)
        processBufferedFrames(now: now)
    }

    /// Routes every complete frame in the decoder, unless the uid's share runs out on the way.
    private func processBufferedFrames(now: Int64) {
        var completedFrame = false
        defer { trackPartialFrame(now: now, completedFrame: completedFrame) }
        while !readPath.value.throttled {
            let frame: [UInt8]
            do throws(FrameError) {
                guard let next = try readPath.value.decoder.nextFrame() else { return }
                frame = next
                completedFrame = true
            } catch {
                sendError(error.errorCode, error.description)
                if error.isFatal || error.errorCode.isFatal {
                    connection.closeAfterFlush()
                    return
                }
                continue
            }
            let message: ClientMessage
            do throws(MessageError) {
                message = try ClientMessage(frame: frame)
            } catch {
                if isAttachedOrAttaching(phase.withLock({ $0 })) {
                    enqueue(.error(error.code, error.message, id: error.intentID))
                } else {
                    sendError(error.code, error.message, id: error.intentID)
                }
                continue
            }
            route(message)
        }
    }

    /// Starts the frame deadline when a frame begins, and keeps the uid's partial-frame memory
    /// within its budget: past it, this connection is closed (`input_limit`).
    private func trackPartialFrame(now: Int64, completedFrame: Bool) {
        let buffered = connection.isClosed ? 0 : readPath.value.decoder.bufferedByteCount
        if buffered == 0 || readPath.value.throttled {
            // Held back by the uid's share, the buffered frames wait for the daemon, not for the
            // client: no deadline runs (reading is paused; it starts again on resuming).
            partialSince.store(0, ordering: .relaxed)
        } else if completedFrame || partialSince.load(ordering: .relaxed) == 0 {
            partialSince.store(now, ordering: .relaxed)
        }
        guard buffered != readPath.value.countedPartialBytes else { return }
        let allowed = context.registry.adjustPartialBytes(uid: connection.peer.uid, by: buffered - readPath.value.countedPartialBytes)
        readPath.value.countedPartialBytes = buffered
        if !allowed {
            sendError(.inputLimit, "Unfinished frames from uid \(connection.peer.uid) hold more than \(context.config.maxPartialBytesPerUID) bytes; finish or close some connections.")
        }
    }

    /// Whether everything the client sent so far has been handled (a handover waits for it).
    package var isIdle: Bool { pending.load(ordering: .relaxed) == 0 && unanswered.load(ordering: .relaxed) <= 0 }

    /// Queues work for the ordered task; stops reading the socket while too much is queued.
    private func enqueue(_ item: Inbound) {
        if pending.add(1, ordering: .relaxed).newValue == Self.inboxHighWater {
            connection.setReadingPaused(true, because: .inboxFull)
        }
        inbox.push(item)
    }

    func dequeued() {
        if pending.subtract(1, ordering: .relaxed).newValue == Self.inboxLowWater {
            connection.setReadingPaused(false, because: .inboxFull)
        }
    }

    /// Before hello nothing is queued, so answers go straight out; after it, everything goes
    /// through the ordered inbox so replies, errors and pongs leave in the order asked.
    private func route(_ message: ClientMessage) {
        let current = phase.withLock { $0 }
        guard isAttachedOrAttaching(current) else {
            switch message {
            case .ping:
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
            case .resync, .bye:
                sendError(.notReady, "Say hello first: nothing but hello is answered before the handshake.")
            case .pong:
                break
            }
            return
        }
        if case .bye = message {
            enqueue(.bye)
            return
        }
        if case .pong = message { return }  // the answer to our ping: hearing it was the point
        if let windowEnd = context.registry.chargeMessage(uid: connection.peer.uid, now: MonotonicClock.nanoseconds()) {
            throttle(until: windowEnd)
        }
        guard allowMessage() else {
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
            enqueue(.intent(intent))
        case .ping(let nonce): enqueue(.ping(nonce: nonce))
        case .resync: enqueue(.resync)
        case .bye: enqueue(.bye)
        case .pong: break
        }
    }

    private func isAttachedOrAttaching(_ phase: Phase) -> Bool {
        switch phase {
        case .attached, .attaching: true
        case .awaitingHello, .closed: false
        }
    }

    /// The uid used its share for this second: stop reading this connection until the window
    /// ends, then carry on with the frames already read (nothing is dropped).
    private func throttle(until windowEnd: Int64) {
        guard !readPath.value.throttled else { return }
        readPath.value.throttled = true
        connection.setReadingPaused(true, because: .uidBudget)
        let wait = max(0, windowEnd - MonotonicClock.nanoseconds())
        Task.detached { [weak self] in
            try? await Task.sleep(for: .nanoseconds(wait))
            guard let self else { return }
            self.connection.onLoop { [weak self] in self?.resumeAfterThrottle() }
        }
    }

    private func resumeAfterThrottle() {
        readPath.value.throttled = false
        connection.setReadingPaused(false, because: .uidBudget)
        processBufferedFrames(now: MonotonicClock.nanoseconds())
    }

    /// A fixed one-second window per client, for intents and pings alike.
    private func allowMessage() -> Bool {
        let now = ContinuousClock.now
        if now - readPath.value.rateWindow.start >= .seconds(1) { readPath.value.rateWindow = (now, 0) }
        readPath.value.rateWindow.count += 1
        return readPath.value.rateWindow.count <= context.config.intentsPerSecond
    }

    /// Called by the sweep: closes a connection whose frame did not complete within the frame
    /// deadline of its first byte (a trickled frame would otherwise hold its buffer forever).
    package func checkFrameDeadline(now: Int64, timeoutNanoseconds timeout: Int64) {
        let since = partialSince.load(ordering: .relaxed)
        guard since != 0, now - since >= timeout, !connection.isClosed else { return }
        sendError(.frameTimeout, "A frame did not complete within \(context.config.frameTimeoutSeconds) seconds of its first byte.")
    }

    /// Called by the liveness sweep: ping a client silent for an interval; close one that has
    /// not answered a ping within another interval.
    package func checkLiveness(now: Int64, intervalNanoseconds interval: Int64) {
        let pinged = pingedAt.load(ordering: .relaxed)
        if pinged != 0 {
            guard now - pinged >= interval else { return }
            send(.goodbye(reason: "idle_timeout"), droppable: false)
            connection.closeAfterFlush()
        } else if now - lastHeard.load(ordering: .relaxed) >= interval {
            pingedAt.store(now, ordering: .relaxed)
            send(.ping(nonce: .int(now)), droppable: false)
        }
    }

    package func connectionOverflowed(_ connection: Connection) {
        enqueue(.overflowed)
    }

    package func connectionDrained(_ connection: Connection) {
        enqueue(.drained)
    }

    /// Stops counting against the uid's limits at once (not when the inbox drains), and ends the
    /// ordered task after what it is doing.
    package func connectionClosed(_ connection: Connection) {
        context.registry.connectionClosed(uid: connection.peer.uid)
        if readPath.value.countedPartialBytes != 0 {
            _ = context.registry.adjustPartialBytes(uid: connection.peer.uid, by: -readPath.value.countedPartialBytes)
            readPath.value.countedPartialBytes = 0
        }
        readPath.value.decoder = FrameDecoder(maximumFrameSize: 1)  // frees a partial frame's buffer now
        context.closed(self)
        inbox.finish()
        context.connectionsChanged()
    }
}
