import Foundation
import Synchronization
import UserListWire
import ThreadLocks

/// Speaks the protocol on one connection, composing the stages in `Stages/`: on the loop thread
/// it decodes (`InboundDecoder`), admits (`Admission`, `UIDHoldBack`) and routes
/// (`MessageRouter`) each message, answering what it can there; hello and intents go, in order,
/// to a task that attaches (`SessionAttach`) and talks to the session's actor, daemon queries
/// aside (`DaemonQueries`). The sweep asks `Liveness` from its own thread.
package final class ClientHandler: ConnectionDelegate, SessionClient, Sendable {
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
    let phase = Lock(ConnectionPhase.awaitingHello)
    /// The read path's stages that only the connection's loop touches.
    struct ReadPath {
        var decoder: InboundDecoder
        var admission: Admission
        var holdBack = UIDHoldBack()
    }
    let readPath: LoopBound<ReadPath>
    let inbox = OrderedInbox<Inbound>()
    let pending = Atomic<Int>(0)
    /// The ordered task is handling an item (it runs off the loop, and enters the session for
    /// it): an intent read meanwhile queues behind it. Set before `pending` counts the item
    /// out and cleared after its answers were handed to the loop, with release ordering, so the
    /// read path that sees the inbox idle also sees those answers queued on its loop.
    let itemInFlight = Atomic<Bool>(false)
    /// Intents queued or running whose reply has not been sent (a handover waits for them).
    let unanswered = Atomic<Int>(0)
    /// Whether the client is still there (the sweep asks from its own thread).
    let liveness = Liveness()
    let encoder = FrameEncoder(maximumFrameSize: FrameLimits.serverToClient)

    package init(connection: Connection, context: ServerContext) {
        self.connection = connection
        self.context = context
        let readPath = ReadPath(decoder: InboundDecoder(maximumFrameSize: context.config.maxFrameBytes),
                                admission: Admission(messagesPerSecond: context.config.intentsPerSecond))
        self.readPath = LoopBound(readPath, on: connection.loop)
        context.liveObjects.handlers.add(1, ordering: .relaxed)
        context.opened(self)
        // Off the loop: it enters the session's actor (on its loop) for each item it takes.
        Task { [self] in await self.run() }
    }

    deinit { context.liveObjects.handlers.subtract(1, ordering: .relaxed) }

    /// A connection the previous process handed over, attached to `session` at (`epoch`,
    /// `seq`) holding `state`: no hello is expected; the stream continues. Call before the
    /// connection starts reading, so the client's next frames find it attached.
    package func resumeAttached(to session: Session, epoch: Int, seq: Int, holding state: NavigationStateBox,
                                awaitingSnapshot: Bool) {
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

    package func sendReply(id: Int, serializedResult: [UInt8]) {
        do throws(FrameError) {
            let frame = try encoder.replyFrame(id: id, serializedResult: serializedResult)
            unanswered.subtract(1, ordering: .relaxed)
            connection.send([(frame, false)])
        } catch {
            // As `send`: the failure is logged and the intent answered with it.
            send(.reply(.failure(id: id, code: .internal,
                                 message: "userlistd could not send a reply message (\(error)); it is logged.")),
                 droppable: false)
            context.logger.error("A server message could not be sent: \(error)", ["USERLISTD_TYPE": "reply"])
        }
    }

    func sendError(_ code: ErrorCode, _ message: String, id: Int? = nil) {
        send(.error(.init(code: code, message: message, id: id)), droppable: false)
        if code.isFatal { connection.closeAfterFlush() }
    }

    // MARK: the ordered inbox

    /// Whether everything the client sent so far has been handled (a handover waits for it).
    package var isIdle: Bool { pending.load(ordering: .relaxed) == 0 && unanswered.load(ordering: .relaxed) <= 0 }

    /// Queues work for the ordered task; stops reading the socket while too much is queued.
    func enqueue(_ item: Inbound) {
        if pending.add(1, ordering: .relaxed).newValue == Self.inboxHighWater {
            connection.setReadingPaused(true, because: .inboxFull)
        }
        inbox.push(item)
    }

    func dequeued() {
        if pending.subtract(1, ordering: .releasing).newValue == Self.inboxLowWater {
            connection.setReadingPaused(false, because: .inboxFull)
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
    package func takeUnhandledInput(_ connection: Connection) -> [UInt8] {
        readPath.value.decoder.takeUnread()
    }

    package func connectionClosed(_ connection: Connection) {
        context.registry.connectionClosed(uid: connection.peer.uid)
        if let delta = readPath.value.admission.partialBytesDelta(buffered: 0) {
            _ = context.registry.adjustPartialBytes(uid: connection.peer.uid, by: delta)
        }
        readPath.value.decoder.discard()  // frees a partial frame's buffer now
        context.closed(self)
        inbox.finish()
        context.connectionsChanged()
    }
}
