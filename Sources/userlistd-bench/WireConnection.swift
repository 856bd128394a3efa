import Glibc
import UserListWire

/// One blocking client connection to the daemon: frames out with `FrameEncoder`, frames in with
/// `FrameDecoder`. Every frame read carries the time of the `recv` that completed it, so a
/// latency never includes the client's own JSON parsing.
///
/// Owned by one thread at a time (the bench hands connections between phases, never shares them).
final class WireConnection {
    let fd: Int32
    private var decoder = FrameDecoder(maximumFrameSize: FrameLimits.serverToClient)
    private let encoder = FrameEncoder(maximumFrameSize: FrameLimits.clientToServer)
    private var readBuffer = [UInt8](repeating: 0, count: 256 * 1024)
    private var lastReadAt: UInt64 = 0
    private var lastSentAt: UInt64 = 0
    private var nextIntentID = 1
    /// The latest `epoch`/`seq` seen and, when `trackDocument` is on, the state they describe.
    var trackDocument = false
    private(set) var document: JSONValue = .null

    init(fd: Int32) {
        self.fd = fd
        Sockets.setReceiveTimeout(fd, seconds: 0.5)
        Sockets.setSendTimeout(fd, seconds: 10)
    }

    static func connect(_ path: String) throws(BenchError) -> WireConnection {
        WireConnection(fd: try Sockets.connect(path))
    }

    deinit { close(fd) }

    // MARK: sending

    /// Sends a message; returns the frame's size in bytes (header included).
    @discardableResult
    func send(_ message: ClientMessage) throws(BenchError) -> Int {
        let frame: [UInt8]
        do throws(FrameError) { frame = try encoder.encode(message) } catch { throw BenchError("encode: \(error)") }
        lastSentAt = monotonicNanos()
        try Sockets.writeAll(fd, frame)
        return frame.count
    }

    func hello(sessionKey: String) throws(BenchError) {
        try send(.hello(.init(protocolVersions: ProtocolVersion.supported,
                              client: PeerInfo(name: "userlistd-bench", build: "1"), sessionKey: sessionKey)))
    }

    /// Sends an intent and returns its id and the frame size.
    @discardableResult
    /// `sentAt` is when its bytes were handed to the socket, after encoding: a round trip timed
    /// from there leaves out the bench client's own JSON work, as it does on the way back (each
    /// frame's time is the `recv` that completed it) and as the raw ping-pong baseline does.
    func intent(_ screen: String, _ action: String,
                _ args: [String: JSONValue]? = nil) throws(BenchError) -> (id: Int, bytes: Int, sentAt: UInt64) {
        let id = nextIntentID
        nextIntentID += 1
        let bytes = try send(.intent(.init(id: id, screen: screen, action: action, args: args)))
        return (id, bytes, lastSentAt)
    }

    // MARK: receiving

    /// The next frame and when it arrived; throws at `until` or when the daemon closes.
    func readFrame(until: UInt64) throws(BenchError) -> (bytes: [UInt8], at: UInt64) {
        while true {
            do throws(FrameError) {
                if let frame = try decoder.nextFrame() { return (frame, lastReadAt) }
            } catch {
                throw BenchError("bad frame from the daemon: \(error)")
            }
            if monotonicNanos() >= until { throw BenchError("timed out waiting for a frame") }
            let count = readBuffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                lastReadAt = monotonicNanos()
                readBuffer.withUnsafeBufferPointer { decoder.feed($0[0..<count]) }
            } else if count == 0 {
                throw BenchError("the daemon closed the connection")
            } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                throw .system("recv")
            }
        }
    }

    /// Reads the next frame as a message (applying snapshots and patches when tracking).
    func readMessage(until: UInt64) throws(BenchError) -> (message: ServerMessage, bytes: Int, at: UInt64) {
        let (frame, at) = try readFrame(until: until)
        let message: ServerMessage
        do throws(MessageError) { message = try ServerMessage(frame: frame) } catch {
            throw BenchError("unreadable frame from the daemon: \(error)")
        }
        if trackDocument { try track(message) }
        if case .error(let error) = message, error.fatal {
            throw BenchError("daemon error \(error.code.rawValue): \(error.message)")
        }
        return (message, frame.count + FrameLimits.headerSize, at)
    }

    private func track(_ message: ServerMessage) throws(BenchError) {
        switch message {
        case .snapshot(let snapshot): document = snapshot.state
        case .patch(let patch):
            do throws(PatchError) { document = try JSONPatch.apply(patch.ops, to: document) } catch {
                throw BenchError("a patch did not apply: \(error)")
            }
        default: break
        }
    }

    /// Reads until the reply to `id`, handing every earlier message to `observe`. Throws on a failed reply.
    @discardableResult
    func awaitReply(_ id: Int, seconds: Double = 10,
                    observe: (ServerMessage, Int, UInt64) throws(BenchError) -> Void = { _, _, _ in })
        throws(BenchError) -> (reply: ServerMessage.Reply, at: UInt64)
    {
        let until = deadline(seconds: seconds)
        while true {
            let (message, bytes, at) = try readMessage(until: until)
            if case .reply(let reply) = message, reply.id == id {
                if case .failure(let body) = reply.outcome {
                    throw BenchError("intent \(id) failed: \(body.code.rawValue): \(body.message)")
                }
                return (reply, at)
            }
            if case .error(let error) = message, error.id == id {
                throw BenchError("intent \(id) refused: \(error.code.rawValue): \(error.message)")
            }
            try observe(message, bytes, at)
        }
    }

    /// Sends hello and reads welcome and snapshot; returns the snapshot frame size.
    @discardableResult
    func attach(sessionKey: String, seconds: Double = 10) throws(BenchError) -> Int {
        try hello(sessionKey: sessionKey)
        let until = deadline(seconds: seconds)
        while true {
            let (message, bytes, _) = try readMessage(until: until)
            if case .snapshot = message { return bytes }
            if case .error(let error) = message {
                throw BenchError("attach refused: \(error.code.rawValue): \(error.message)")
            }
        }
    }

    /// Drains whatever arrives within `seconds` (events that trail a measured patch).
    func drain(seconds: Double) {
        let until = deadline(seconds: seconds)
        while monotonicNanos() < until {
            guard (try? readMessage(until: until)) != nil else { return }
        }
    }
}

extension ServerMessage {
    /// True when `text` appears as a JSON string anywhere in the message (e.g. a new name).
    func mentions(_ text: String) -> Bool {
        json.description.contains(JSONValue.string(text).description)
    }

    /// True for a patch with an operation under `pathPrefix` (e.g. "/screens/0/state/users").
    func isPatch(touching pathPrefix: String) -> Bool {
        guard case .patch(let patch) = self else { return false }
        return patch.ops.contains { $0.path.description.hasPrefix(pathPrefix) }
    }
}
