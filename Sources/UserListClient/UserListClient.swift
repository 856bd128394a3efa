import Foundation
import UserListWire
import ThreadLocks

/// A connection to `userlistd` that mirrors one session's state document.
///
/// One dedicated reader thread per client owns the socket's read side: it decodes frames, feeds
/// them to a `SessionMirror` and carries out what the mirror says (ask for resync, deliver state,
/// events and replies). Intents may be sent from any task; each waits for its `reply`.
///
/// When the connection drops, the reader thread reconnects with backoff and sends `hello` with
/// the same session key, so the daemon reattaches it to the same ViewModels (after a daemon
/// restart, to the session it restored). Intents in flight when the connection drops fail with
/// `.disconnected`: the caller cannot know whether they were performed.
public final class UserListClient: Sendable {
    public let configuration: ClientConfiguration
    /// Every state change, event and connection change, in order. One consumer.
    public let updates: AsyncStream<ClientUpdate>

    private let continuation: AsyncStream<ClientUpdate>.Continuation
    /// The mirror and the connection state (`Core`); also used by the handshake
    /// (`UserListClient+Handshake`).
    let core = Lock(Core())
    /// The stream intents and resyncs are written to. Writers hold this lock for the whole
    /// write, and the reader thread closes the descriptor only while holding it, so a write can
    /// never land on a reused descriptor number.
    let writer = Lock<UnixStream?>(nil)
    let encoder = FrameEncoder(maximumFrameSize: FrameLimits.clientToServer)
    /// Paces intents under the limit of the daemon's current welcome (`UserListClient+Intents`).
    let pacer = Lock(IntentPacer(limit: IntentPacer.defaultLimit))

    struct Core {
        var mirror = SessionMirror()
        var connection: ConnectionState = .connecting
        var nextIntentID = 1
        var pending: [Int: PendingReply] = [:]
        var closed = false
        var started = false
        /// The document as the last connection left it (see `documentAtLastDrop`).
        var documentAtDrop: JSONValue?
        /// Test hook: patches to discard on arrival, to provoke a sequence gap.
        var patchesToDrop = 0
    }

    public init(configuration: ClientConfiguration) {
        self.configuration = configuration
        (updates, continuation) = AsyncStream.makeStream(of: ClientUpdate.self,
                                                         bufferingPolicy: .bufferingNewest(10_000))
    }

    // MARK: public API

    /// Connects, says hello and waits for the first snapshot; then starts the reader thread.
    /// Blocks the calling thread for at most `configuration.handshakeTimeout`.
    public func connect() throws(ClientError) {
        let alreadyStarted = core.withLock { core in
            defer { core.started = true }
            return core.started
        }
        precondition(!alreadyStarted, "connect() may be called once")
        let (stream, decoder) = try establish()
        let thread = Thread { [self] in self.readLoop(stream: stream, decoder: decoder) }
        thread.name = "userlist-client-reader"
        thread.start()
    }

    /// The current state document (the last good one while out of step or reconnecting).
    public var document: JSONValue? { core.withLock { $0.mirror.document } }

    public var connectionState: ConnectionState { core.withLock { $0.connection } }

    /// The welcome of the current connection.
    public var welcome: ServerMessage.Welcome? { core.withLock { $0.mirror.welcome } }

    public var resyncCount: Int { core.withLock { $0.mirror.resyncCount } }

    /// The pid of the process listening on the socket of the current connection (its
    /// `SO_PEERCRED`), nil while not connected: the daemon's, unless another process (systemd's
    /// socket activation, a handover) created the listening socket.
    public var peerPID: Int? { writer.withLock { $0?.peerPID.map(Int.init) } }

    /// The state document as it was when the connection last dropped, before any reconnect
    /// replaced it: what a view compares the restored session with (`DraftOffer`).
    public var documentAtLastDrop: JSONValue? { core.withLock { $0.documentAtDrop } }

    /// Writes the intent's frame and registers `reply` for its reply or failure.
    func write(screen: String, action: String, args: [String: JSONValue]?, timeout: Duration?,
               awaiting reply: PendingReply) {
        let frame: [UInt8]
        let id = core.withLock { core in
            defer { core.nextIntentID += 1 }
            return core.nextIntentID
        }
        do {
            frame = try encoder.encode(ClientMessage.intent(.init(id: id, screen: screen, action: action, args: args)))
        } catch {
            return reply.fail(ClientError(.protocolViolation, "the intent is too large to send: \(error)"))
        }
        let timeout = timeout ?? configuration.replyTimeout
        let refusal: ClientError? = core.withLock { core in
            if core.closed { return ClientError(.closed, "the client is closed") }
            guard core.connection.isConnected else {
                return ClientError(.disconnected, "not connected to userlistd (reconnecting)")
            }
            core.pending[id] = reply
            return nil
        }
        if let refusal { return reply.fail(refusal) }
        let written = writer.withLock { $0?.writeAll(frame) ?? false }
        if !written {
            fail(id, ClientError(.disconnected, "the connection to userlistd dropped"))
            return
        }
        Task { [weak self] in
            try? await Task.sleep(for: timeout)
            self?.fail(id, ClientError(.timedOut, "no reply from userlistd to \(screen).\(action) within \(timeout)"))
        }
    }

    /// Says goodbye and stops; pending intents fail with `.closed`. Idempotent. The daemon ends
    /// the session (unless other clients are attached to it).
    public func close() { stop(sayingBye: true) }

    /// Stops without `bye`, as a closed terminal would: the daemon keeps the session (screens
    /// and unsaved drafts) for its retention period, and the same session key comes back to it.
    public func detach() { stop(sayingBye: false) }

    private func stop(sayingBye: Bool) {
        let wasClosed = core.withLock { core in
            defer { core.closed = true }
            return core.closed
        }
        guard !wasClosed else { return }
        let bye = sayingBye ? try? encoder.encode(ClientMessage.bye) : nil
        writer.withLock { stream in
            if let stream, let bye { _ = stream.writeAll(bye) }
            stream?.shutdown()
        }
        failAll(ClientError(.closed, "the client was closed"))
        setConnection(.closed(reason: "closed by the client"))
        continuation.finish()
    }

    /// Test hook: discard the next `count` patches as if they were lost, to provoke a gap.
    package func dropNextPatches(_ count: Int = 1) {
        core.withLock { $0.patchesToDrop += count }
    }

    // MARK: connection

    /// The next decodable message; unknown message types are skipped (a newer server may send
    /// more), undecodable frames make the mirror resync.
    func nextMessage(_ decoder: inout FrameDecoder) throws(ClientError) -> ServerMessage? {
        while true {
            let frame: [UInt8]
            do throws(FrameError) {
                guard let next = try decoder.nextFrame() else { return nil }
                frame = next
            } catch {
                if error.isFatal {
                    throw ClientError(.protocolViolation, "the server's byte stream is unusable: \(error)")
                }
                continue
            }
            if deliverAsSlice(frame) { continue }
            do throws(MessageError) {
                return try ServerMessage(frame: frame)
            } catch {
                if error.code == .unknownMessageType { continue }
                // A frame we could not read may have been a patch: the copy is no longer trusted.
                let effects = core.withLock { $0.mirror.unreadableMessage("unreadable frame: \(error)") }
                if !effects.isEmpty { sendResync() }
                continue
            }
        }
    }

    /// Feeds one message to the mirror and carries out its effects. Returns the welcome once
    /// the first snapshot after it has arrived (the handshake is then complete).
    @discardableResult
    func process(_ message: ServerMessage) -> ServerMessage.Welcome? {
        let (effects, completedWelcome): ([SessionMirror.Effect], ServerMessage.Welcome?) = core.withLock { core in
            if case .patch = message, core.patchesToDrop > 0 {
                core.patchesToDrop -= 1
                return ([], nil)
            }
            let wasWaiting = core.mirror.phase == .awaitingSnapshot && !core.connection.isConnected
            let effects = core.mirror.receive(message)
            if wasWaiting, case .snapshot = message, let welcome = core.mirror.welcome { return (effects, welcome) }
            return (effects, nil)
        }
        for effect in effects {
            switch effect {
            case .sendResync:
                sendResync()
            case .sendPong(let nonce):
                sendPong(nonce)
            case .welcomed, .pong:
                break
            case .stateChanged(let change):
                continuation.yield(.state(change))
            case .event(let event):
                continuation.yield(.event(event))
            case .reply(let reply):
                switch reply.outcome {
                case .success(let result): succeed(reply.id, result)
                case .failure(let body): fail(reply.id, ClientError(.server(body.code), body.message, kept: body.kept))
                }
            case .error(let error):
                if let id = error.id, core.withLock({ $0.pending[id] != nil }) {
                    fail(id, ClientError(.server(error.code), error.message))
                } else {
                    continuation.yield(.serverError(error))
                }
            case .goodbye:
                break  // the end of stream that follows drives reconnecting
            }
        }
        return completedWelcome
    }

    private func sendPong(_ nonce: JSONValue?) {
        guard let frame = try? encoder.encode(ClientMessage.pong(nonce: nonce)) else { return }
        writer.withLock { _ = $0?.writeAll(frame) }
    }

    private func sendResync() {
        guard let frame = try? encoder.encode(ClientMessage.resync) else { return }
        writer.withLock { _ = $0?.writeAll(frame) }
    }

    // MARK: reader thread

    private func readLoop(stream: UnixStream, decoder: FrameDecoder) {
        var stream = stream
        var decoder = decoder
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            var finalReason: String?
            // Frames that arrived in the same read as the handshake's snapshot are already in
            // the decoder: handle them before blocking in read, or they wait for the next byte.
            var count = 0
            reading: while true {
                decoder.feed(buffer[0..<count])
                do throws(ClientError) {
                    while let message = try nextMessage(&decoder) {
                        if case .error(let error) = message, error.fatal, error.code == .unsupportedVersion {
                            finalReason = error.message
                        }
                        process(message)
                    }
                } catch {
                    break reading
                }
                count = 0
                while count == 0 {
                    switch stream.read(into: &buffer) {
                    case .bytes(let n): count = n
                    case .timedOut: continue
                    case .endOfStream, .failed: break reading
                    }
                }
            }
            writer.withLock { current in
                current = nil
                stream.close()
            }
            core.withLock { $0.documentAtDrop = $0.mirror.document }
            failAll(ClientError(.disconnected,
                                "the connection to userlistd dropped; the intent may or may not have been performed"))
            if core.withLock({ $0.closed }) { return }
            guard configuration.reconnect.enabled, finalReason == nil else {
                return finish(reason: finalReason ?? "the connection to userlistd was closed")
            }
            guard let next = reconnect() else { return }
            (stream, decoder) = next
        }
    }

    /// Tries to connect again with backoff; `nil` when closed or out of attempts (then finished).
    private func reconnect() -> (UnixStream, FrameDecoder)? {
        let policy = configuration.reconnect
        var lastError = "no attempt made"
        for attempt in 1...max(1, policy.maximumAttempts) {
            setConnection(.reconnecting(attempt: attempt))
            if !sleep(policy.delay(beforeAttempt: attempt)) { return nil }
            do throws(ClientError) {
                return try establish()
            } catch {
                lastError = error.message
                if case .server(let code) = error.kind, code == .unsupportedVersion {
                    break
                }
            }
        }
        finish(reason: "gave up reconnecting: \(lastError)")
        return nil
    }

    /// Sleeps in short slices so `close()` is noticed; `false` if closed meanwhile.
    private func sleep(_ duration: Duration) -> Bool {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline {
            if core.withLock({ $0.closed }) { return false }
            Thread.sleep(forTimeInterval: min(0.05, max(0, Double((deadline - ContinuousClock.now) / .seconds(1)))))
        }
        return !core.withLock { $0.closed }
    }

    private func finish(reason: String) {
        core.withLock { $0.closed = true }
        failAll(ClientError(.disconnected, reason))
        setConnection(.closed(reason: reason))
        continuation.finish()
    }

    // MARK: bookkeeping

    func setConnection(_ state: ConnectionState) {
        let changed = core.withLock { core in
            if case .closed = core.connection { return false }
            core.connection = state
            return true
        }
        if changed { continuation.yield(.connection(state)) }
    }

    private func succeed(_ id: Int, _ result: JSONValue?) {
        core.withLock { $0.pending.removeValue(forKey: id) }?.succeed(result)
    }

    private func fail(_ id: Int, _ error: ClientError) {
        core.withLock { $0.pending.removeValue(forKey: id) }?.fail(error)
    }

    /// A successful reply to an intent waiting for a slice (`sendForSlice`) goes to it unbuilt;
    /// every other frame (and a reply this cannot read) goes on to `ServerMessage`.
    private func deliverAsSlice(_ frame: [UInt8]) -> Bool {
        guard core.withLock({ $0.pending.values.contains(where: \.wantsSlice) }),
              let reply = SliceReply(frame: frame) else { return false }
        let waiting: PendingReply? = core.withLock { core in
            core.pending[reply.id]?.wantsSlice == true ? core.pending.removeValue(forKey: reply.id) : nil
        }
        guard case .slice(let completion) = waiting else { return false }
        completion(.success(reply.result))
        return true
    }

    private func failAll(_ error: ClientError) {
        let pending = core.withLock { core in
            defer { core.pending = [:] }
            return core.pending
        }
        for reply in pending.values { reply.fail(error) }
    }
}
