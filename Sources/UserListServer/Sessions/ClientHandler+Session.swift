import Foundation
import Synchronization
import UserListWire
import ThreadLocks

/// The connection's ordered task: hello, intents and the rest, in the order the client sent
/// them, taken to its session's actor. It runs off the loop; what it sends is queued on the
/// connection's loop, ahead of the session's answer to the same item.
extension ClientHandler {
    func run() async {
        var session: Session?
        while let item = await inbox.next() {
            itemInFlight.store(true, ordering: .relaxed)
            defer { itemInFlight.store(false, ordering: .releasing) }
            dequeued()
            // Work a client sent before it vanished still runs (a save it asked for lands), though
            // nobody reads the answers; the connection stopped counting against its uid at close.
            switch item {
            case .hello(let hello):
                session = await attach(hello)
            case .adopted(let adopted, let epoch, let seq, let state, let awaitingSnapshot):
                session = adopted
                await adopted.perform {
                    $0.adopt(self, epoch: epoch, seq: seq, holding: state.state, awaitingSnapshot: awaitingSnapshot)
                }
            case .duplicateHello:
                sendError(.alreadyAttached,
                          "This connection already said hello; open a new connection for another session.")
            case .ping(let nonce):
                send(.pong(nonce: nonce), droppable: false)
            case .error(let code, let message, let id):
                sendError(code, message, id: id)
            case .refused(let id, let code, let message):
                send(.reply(.failure(id: id, code: code, message: message)), droppable: false)
            case .overflowed:
                if let session { await session.perform { $0.clientOverflowed(self) } }
            case .intent(let intent):
                guard let session else {
                    unanswered.subtract(1, ordering: .relaxed)  // answered by this error instead
                    sendError(.notReady, "The handshake did not complete.", id: intent.id)
                    continue
                }
                guard let decoded = forSession(intent, session: session) else { continue }
                await session.perform { $0.handle(intent, decoded: decoded, from: self) }
            case .resync, .drained:
                if let session { await session.perform { $0.resendSnapshot(to: self) } }
            case .bye:
                // A client that says bye is done with the session: end it now unless others
                // are attached (a client that merely drops keeps it for the retention period).
                if let session {
                    await session.perform { $0.detach(self) }
                    context.registry.endIfUnattended(session)
                }
                send(.goodbye(reason: "bye"), droppable: false)
                connection.closeAfterFlush()
            }
        }
        if let session { await session.perform { $0.detach(self) } }
        phase.withLock { $0 = .closed }
    }

    /// What the session gets for `intent`: its decoding, or nil when it was answered here (a
    /// daemon query: `status`, `sessions`).
    func forSession(_ intent: ClientMessage.Intent, session: Session) -> Result<Intent, IntentError>? {
        switch DaemonQueries.take(intent) {
        case .query(let query):
            let registry = context.registry, introspection = context.introspection
            let reply = DaemonQueries.reply(to: query, id: intent.id, fromAdmin: context.isWriter(connection.peer.uid),
                                            adminGroup: context.config.adminGroup) { query in
                switch query {
                case .status: introspection.status(registry: registry)
                case .sessions: introspection.sessions(registry: registry)
                }
            }
            send(reply, droppable: false)
            return nil
        case .forSession(let decoded):
            context.logger.debug("Intent", [
                "USERLISTD_SESSION": session.id, "USERLISTD_SCREEN": intent.screen,
                "USERLISTD_ACTION": intent.action, "USERLISTD_INTENT_ID": String(intent.id)])
            return decoded
        }
    }

    func attach(_ hello: ClientMessage.Hello) async -> Session? {
        let key = SessionKey(uid: connection.peer.uid, clientKey: hello.sessionKey)
        guard let (session, epoch, resumed) = open(hello, key: key) else { return nil }
        phase.withLock { $0 = .attached(session) }
        await session.perform { $0.attach(self, epoch: epoch, name: hello.client.name) }
        context.registry.attachFinished(key)
        context.logger.info(
            resumed ? "Client reattached to session" : "Client opened a session",
            ["USERLISTD_SESSION": session.id, "USERLISTD_CLIENT_UID": String(key.uid),
             "USERLISTD_CLIENT_PID": String(connection.peer.pid), "USERLISTD_CLIENT": hello.client.name])
        context.connectionsChanged()
        return session
    }

    /// Opens the session and sends the welcome, or the refusal. Not async, so that nothing it
    /// builds (the stage holds the configuration) lives in the connection's task frame, which
    /// lasts as long as the connection.
    private func open(_ hello: ClientMessage.Hello, key: SessionKey) -> (Session, epoch: Int, resumed: Bool)? {
        let stage = SessionAttach(registry: context.registry, config: context.config, server: context.serverInfo)
        switch stage.open(hello, key: key, on: connection.loop) {
        case .refused(let code, let message):
            sendError(code, message)
            return nil
        case .opened(let session, let welcome):
            send(.welcome(welcome), droppable: false)
            return (session, welcome.epoch, welcome.resumed)
        }
    }
}
