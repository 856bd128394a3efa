import ThreadLocks
import UserListWire

/// Opening a connection: `hello` with this client's session key, then the server's messages
/// until its `welcome` and the first snapshot after it. The same on the first connection and on
/// every reconnection (the reader thread's).
extension UserListClient {
    /// Connects and runs the handshake up to the first snapshot.
    func establish() throws(ClientError) -> (UnixStream, FrameDecoder) {
        let stream = try UnixStream.connect(path: configuration.socketPath)
        do throws(ClientError) {
            let decoder = try handshake(on: stream)
            return (stream, decoder)
        } catch {
            stream.close()
            throw error
        }
    }

    private func handshake(on stream: UnixStream) throws(ClientError) -> FrameDecoder {
        core.withLock { $0.mirror.connectionRestarted() }
        let hello = ClientMessage.hello(.init(
            protocolVersions: ProtocolVersion.supported,
            client: PeerInfo(name: configuration.clientName, build: configuration.clientBuild),
            sessionKey: configuration.sessionKey,
            terminal: configuration.terminal.map { .init(columns: $0.columns, rows: $0.rows) }))
        guard let frame = try? encoder.encode(hello), stream.writeAll(frame) else {
            throw ClientError(.unreachable, "userlistd at \(configuration.socketPath) hung up before the handshake")
        }
        let deadline = ContinuousClock.now + configuration.handshakeTimeout
        stream.setReceiveTimeout(.milliseconds(250))
        var decoder = FrameDecoder(maximumFrameSize: FrameLimits.serverToClient)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            if ContinuousClock.now >= deadline {
                throw ClientError(.unreachable, "userlistd at \(configuration.socketPath) did not complete the "
                                  + "handshake within \(configuration.handshakeTimeout)")
            }
            switch stream.read(into: &buffer) {
            case .timedOut:
                continue
            case .endOfStream, .failed:
                throw ClientError(.unreachable,
                                  "userlistd at \(configuration.socketPath) closed the connection during the handshake")
            case .bytes(let count):
                decoder.feed(buffer[0..<count])
            }
            while let message = try nextMessage(&decoder) {
                if case .error(let error) = message, error.fatal {
                    throw ClientError(.server(error.code), error.message)
                }
                let welcome = process(message)
                if let welcome {
                    let limit = welcome.intentsPerSecond ?? IntentPacer.defaultLimit
                    pacer.withLock { $0 = IntentPacer(limit: limit) }
                    stream.setReceiveTimeout(nil)
                    writer.withLock { $0 = stream }
                    setConnection(.connected(welcome))
                    return decoder
                }
            }
        }
    }
}
