import UserListWire

/// Where a connection is in the protocol. Read by the loop for each message, written by the
/// loop (hello read) and by the ordered task (attached, closed): a `Lock` in `ClientHandler`.
enum ConnectionPhase {
    case awaitingHello
    case attaching
    case attached(Session)
    case closed

    /// After hello, everything the client sends is queued and answered in order.
    var acceptsQueuedWork: Bool {
        switch self {
        case .attached, .attaching: true
        case .awaitingHello, .closed: false
        }
    }
}

/// The routing stage: where one decoded message goes. Before hello nothing is queued, so
/// answers go straight out; after it everything takes the ordered inbox, or for an intent the
/// session in place, so replies, errors and pongs leave in the order asked. Stateless, called on
/// the connection's loop with the phase read once for the message.
enum MessageRouter {
    enum Route {
        /// Nothing to do (a pong: hearing it was the point).
        case ignore
        /// Answered at once, before hello.
        case answer(ErrorCode, String, id: Int?)
        /// A hello in a version both speak: the connection starts attaching.
        case attach(ClientMessage.Hello)
        /// Answered in order by the ordered task.
        case queue(ClientHandler.Inbound)
        /// Past the client's share for this second; an intent (with its id) still gets a reply.
        case rateLimited(intentID: Int?)
        /// An admitted intent, for the session.
        case intent(ClientMessage.Intent)
    }

    /// Routes `message`; `admit` (the message windows) is asked only for what counts against
    /// them: everything after hello but bye and pong.
    static func route(_ message: ClientMessage, phase: ConnectionPhase, admit: () -> Bool) -> Route {
        guard phase.acceptsQueuedWork else { return routeBeforeHello(message) }
        switch message {
        case .bye: return .queue(.bye)
        case .pong: return .ignore
        case .hello: return admit() ? .queue(.duplicateHello) : .rateLimited(intentID: nil)
        case .ping(let nonce): return admit() ? .queue(.ping(nonce: nonce)) : .rateLimited(intentID: nil)
        case .resync: return admit() ? .queue(.resync) : .rateLimited(intentID: nil)
        case .intent(let intent): return admit() ? .intent(intent) : .rateLimited(intentID: intent.id)
        }
    }

    /// A whole frame that is not a valid message: answered in order after hello, at once before.
    static func route(_ error: MessageError, phase: ConnectionPhase) -> Route {
        phase.acceptsQueuedWork ? .queue(.error(error.code, error.message, id: error.intentID))
            : .answer(error.code, error.message, id: error.intentID)
    }

    /// What a rate-limited message is answered with, in order: every intent gets its one reply.
    static func refusal(intentID: Int?, limit: Int) -> ClientHandler.Inbound {
        let text = "Too many messages: at most \(limit) per second per client."
        guard let intentID else { return .error(.rateLimited, text, id: nil) }
        return .refused(id: intentID, .rateLimited, text)
    }

    /// The session, when an intent may enter it straight from the read, with no queue: it lives
    /// on `loop` (the reading thread) and nothing queued before it waits (`inboxIdle`: the
    /// client's earlier messages, the loop's jobs), so the client's order is kept and so is what
    /// reached the loop first. Otherwise (a session on another loop, an attach under way, a
    /// backlog) the intent takes the inbox, behind the loop's jobs.
    static func sessionTakingIntentsInPlace(_ phase: ConnectionPhase, inboxIdle: Bool, loop: EventLoop) -> Session? {
        guard inboxIdle, case .attached(let session) = phase, session.loop === loop else { return nil }
        return session
    }

    private static func routeBeforeHello(_ message: ClientMessage) -> Route {
        switch message {
        case .ping, .resync, .bye:
            return .answer(.notReady, "Say hello first: nothing but hello is answered before the handshake.", id: nil)
        case .hello(let hello):
            guard ProtocolVersion.negotiate(client: hello.protocolVersions) != nil else {
                return .answer(.unsupportedVersion, ProtocolVersion.mismatchMessage(client: hello.protocolVersions),
                               id: nil)
            }
            return .attach(hello)
        case .intent(let intent):
            return .answer(.notReady, "Say hello first: intents are only accepted after the handshake.",
                           id: intent.id)
        case .pong:
            return .ignore
        }
    }
}
