import UserListWire

/// The attach stage: from a hello to the session its key names (reattached when it is live, else
/// new) and the welcome that says which. Runs on the connection's ordered task and keeps nothing:
/// the registry owns the sessions, and counts this attach as under way until `attachFinished`.
struct SessionAttach {
    let registry: SessionRegistry
    let config: DaemonConfig
    let server: PeerInfo

    enum Outcome {
        case opened(Session, ServerMessage.Welcome)
        /// The uid is at its session limit with none to evict: answered with this error.
        case refused(ErrorCode, String)
    }

    /// Finds or makes `key`'s session for `hello` on `loop`, the loop of the connection.
    func open(_ hello: ClientMessage.Hello, key: SessionKey, on loop: EventLoop) -> Outcome {
        let found: (session: Session, resumed: Bool)
        do throws(SessionRegistry.AttachError) {
            found = try registry.session(for: key, on: loop, client: hello.client.name)
        } catch {
            switch error {
            case .tooManySessions(let limit):
                return .refused(.tooManySessions,
                                "uid \(key.uid) already holds \(limit) sessions; reuse a session key or close some.")
            }
        }
        let session = found.session
        return .opened(session, ServerMessage.Welcome(
            protocolVersion: ProtocolVersion.negotiate(client: hello.protocolVersions) ?? ProtocolVersion.current,
            server: server, sessionID: session.id, resumed: found.resumed,
            access: session.readOnly ? .readOnly : .readWrite, epoch: EpochSource.next(),
            intentsPerSecond: config.intentsPerSecond,
            sessionRetentionSeconds: Int(config.retentionSeconds.rounded()),
            writeGroup: session.readOnly ? config.adminGroup : nil))
    }
}
