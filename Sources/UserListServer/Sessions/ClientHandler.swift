import Foundation
import Synchronization
import UserListWire

/// Speaks the protocol on one connection: frames and parses on the event loop thread, answers
/// what it can there (errors, pong, rate limits), and hands hello and intents, in order, to a
/// task that talks to the session's actor.
package final class ClientHandler: ConnectionDelegate, SessionClient, Sendable {
    private enum Phase {
        case awaitingHello
        case attaching
        case attached(Session)
        case closed
    }

    /// Work for the ordered inbox task.
    private enum Inbound: Sendable {
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
    private let context: ServerContext
    private let phase = Mutex(Phase.awaitingHello)
    // Invariant: only touched from ConnectionDelegate callbacks, which the event loop thread makes one at a time.
    nonisolated(unsafe) private var decoder: FrameDecoder
    nonisolated(unsafe) private var rateWindow: (start: ContinuousClock.Instant, count: Int) = (.now, 0)
    private let inbox = OrderedInbox<Inbound>()
    private let pending = Atomic<Int>(0)
    /// Intents queued or running whose reply has not been sent (a handover waits for them).
    private let unanswered = Atomic<Int>(0)
    /// When the client last sent anything, and whether it has been pinged since (liveness).
    private let lastHeard = Atomic<Int64>(MonotonicClock.nanoseconds())
    /// When the unanswered ping went out, or 0.
    private let pingedAt = Atomic<Int64>(0)
    /// When the first byte of the frame still incomplete arrived, or 0 (the frame deadline).
    private let partialSince = Atomic<Int64>(0)
    // Invariant: only touched from ConnectionDelegate callbacks on the event loop thread.
    /// Partial-frame bytes this connection has counted against its uid's budget.
    nonisolated(unsafe) private var countedPartialBytes = 0
    // Invariant: only touched on the event loop thread.
    /// The uid used its share of messages for this second: frames wait in the decoder.
    nonisolated(unsafe) private var throttled = false
    private let encoder = FrameEncoder(maximumFrameSize: FrameLimits.serverToClient)

    package init(connection: Connection, context: ServerContext) {
        self.connection = connection
        self.context = context
        self.decoder = FrameDecoder(maximumFrameSize: context.config.maxFrameBytes)
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

    private func sendError(_ code: ErrorCode, _ message: String, id: Int? = nil) {
        send(.error(.init(code: code, message: message, id: id)), droppable: false)
        if code.isFatal { connection.closeAfterFlush() }
    }

    // MARK: ConnectionDelegate (event loop thread)

    package func connection(_ connection: Connection, received bytes: UnsafeRawBufferPointer) {
        let now = MonotonicClock.nanoseconds()
        lastHeard.store(now, ordering: .relaxed)
        pingedAt.store(0, ordering: .relaxed)
        decoder.feed(bytes)
        processBufferedFrames(now: now)
    }

    /// Routes every complete frame in the decoder, unless the uid's share runs out on the way.
    private func processBufferedFrames(now: Int64) {
        var completedFrame = false
        defer { trackPartialFrame(now: now, completedFrame: completedFrame) }
        while !throttled {
            let frame: [UInt8]
            do throws(FrameError) {
                guard let next = try decoder.nextFrame() else { return }
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
        let buffered = connection.isClosed ? 0 : decoder.bufferedByteCount
        if buffered == 0 || throttled {
            // Held back by the uid's share, the buffered frames wait for the daemon, not for the
            // client: no deadline runs (reading is paused; it starts again on resuming).
            partialSince.store(0, ordering: .relaxed)
        } else if completedFrame || partialSince.load(ordering: .relaxed) == 0 {
            partialSince.store(now, ordering: .relaxed)
        }
        guard buffered != countedPartialBytes else { return }
        let allowed = context.registry.adjustPartialBytes(uid: connection.peer.uid, by: buffered - countedPartialBytes)
        countedPartialBytes = buffered
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

    private func dequeued() {
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
        guard !throttled else { return }
        throttled = true
        connection.setReadingPaused(true, because: .uidBudget)
        let wait = max(0, windowEnd - MonotonicClock.nanoseconds())
        Task.detached { [weak self] in
            try? await Task.sleep(for: .nanoseconds(wait))
            guard let self else { return }
            self.connection.onLoop { [weak self] in self?.resumeAfterThrottle() }
        }
    }

    private func resumeAfterThrottle() {
        throttled = false
        connection.setReadingPaused(false, because: .uidBudget)
        processBufferedFrames(now: MonotonicClock.nanoseconds())
    }

    /// A fixed one-second window per client, for intents and pings alike.
    private func allowMessage() -> Bool {
        let now = ContinuousClock.now
        if now - rateWindow.start >= .seconds(1) { rateWindow = (now, 0) }
        rateWindow.count += 1
        return rateWindow.count <= context.config.intentsPerSecond
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
        if countedPartialBytes != 0 {
            _ = context.registry.adjustPartialBytes(uid: connection.peer.uid, by: -countedPartialBytes)
            countedPartialBytes = 0
        }
        decoder = FrameDecoder(maximumFrameSize: 1)  // frees a partial frame's buffer now
        context.closed(self)
        inbox.finish()
        context.connectionsChanged()
    }

    // MARK: ordered work, off the loop thread

    private func run() async {
        var session: Session?
        while let item = await inbox.next() {
            dequeued()
            // Work a client sent before it vanished still runs (a save it asked for lands), though
            // nobody reads the answers; the connection stopped counting against its uid at close.
            switch item {
            case .hello(let hello):
                session = await attach(hello)
            case .adopted(let adopted, let epoch, let seq, let state, let awaitingSnapshot):
                session = adopted
                await adopted.adopt(self, epoch: epoch, seq: seq, holding: state.state, awaitingSnapshot: awaitingSnapshot)
            case .duplicateHello:
                sendError(.alreadyAttached, "This connection already said hello; open a new connection for another session.")
            case .ping(let nonce):
                send(.pong(nonce: nonce), droppable: false)
            case .error(let code, let message, let id):
                sendError(code, message, id: id)
            case .refused(let id, let code, let message):
                send(.reply(.failure(id: id, code: code, message: message)), droppable: false)
            case .overflowed:
                await session?.clientOverflowed(self)
            case .intent(let intent):
                guard let session else {
                    unanswered.subtract(1, ordering: .relaxed)  // answered by this error instead
                    sendError(.notReady, "The handshake did not complete.", id: intent.id)
                    continue
                }
                if intent.screen == "session", intent.action == "status" || intent.action == "sessions" {
                    introspect(intent)
                    continue
                }
                context.logger.debug("Intent", [
                    "USERLISTD_SESSION": session.id, "USERLISTD_SCREEN": intent.screen,
                    "USERLISTD_ACTION": intent.action, "USERLISTD_INTENT_ID": String(intent.id)])
                await session.handle(intent, from: self)
            case .resync:
                await session?.resendSnapshot(to: self)
            case .drained:
                await session?.resendSnapshot(to: self)
            case .bye:
                // A client that says bye is done with the session: end it now unless others
                // are attached (a client that merely drops keeps it for the retention period).
                if let session {
                    await session.detach(self)
                    context.registry.endIfUnattended(session)
                }
                send(.goodbye(reason: "bye"), droppable: false)
                connection.closeAfterFlush()
            }
        }
        if let session { await session.detach(self) }
        phase.withLock { $0 = .closed }
    }

    private func introspect(_ intent: ClientMessage.Intent) {
        guard context.isWriter(connection.peer.uid) else {
            send(.reply(.failure(id: intent.id, code: .forbidden,
                                 message: "'\(intent.action)' is for root and members of the '\(context.config.adminGroup)' group.")), droppable: false)
            return
        }
        let result = intent.action == "status"
            ? context.introspection.status(registry: context.registry)
            : context.introspection.sessions(registry: context.registry)
        send(.reply(.success(id: intent.id, result: result)), droppable: false)
    }

    private func attach(_ hello: ClientMessage.Hello) async -> Session? {
        let key = SessionKey(uid: connection.peer.uid, clientKey: hello.sessionKey)
        let found: (session: Session, resumed: Bool)
        do throws(SessionRegistry.AttachError) {
            found = try context.registry.session(for: key)
        } catch {
            guard case .tooManySessions(let limit) = error else { return nil }
            sendError(.tooManySessions, "uid \(key.uid) already holds \(limit) sessions; reuse a session key or close some.")
            return nil
        }
        let session = found.session
        let version = ProtocolVersion.negotiate(client: hello.protocolVersions) ?? ProtocolVersion.current
        let epoch = EpochSource.next()
        send(.welcome(.init(
            protocolVersion: version, server: context.serverInfo, sessionID: session.id,
            resumed: found.resumed, access: session.readOnly ? .readOnly : .readWrite,
            epoch: epoch, intentsPerSecond: context.config.intentsPerSecond)), droppable: false)
        phase.withLock { $0 = .attached(session) }
        await session.attach(self, epoch: epoch)
        context.registry.attachFinished(key)
        context.logger.info(
            found.resumed ? "Client reattached to session" : "Client opened a session",
            ["USERLISTD_SESSION": session.id, "USERLISTD_CLIENT_UID": String(key.uid),
             "USERLISTD_CLIENT_PID": String(connection.peer.pid), "USERLISTD_CLIENT": hello.client.name])
        context.connectionsChanged()
        return session
    }
}
