import Foundation
import UserListTestSupport
import Glibc
import UserListWire

/// Socket calls without the daemon's helpers, so the tests depend on the wire, not the server.
enum RawSocket {
    static func connect(_ path: String) throws -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw FaultFailure("socket path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FaultFailure("socket: errno \(errno)") }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else {
            let code = errno
            close(fd)
            throw FaultFailure("connect \(path): errno \(code)")
        }
        return fd
    }

    /// Writes everything (blocking); false if the peer is gone.
    @discardableResult
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    static func frame(_ body: [UInt8]) -> [UInt8] {
        withUnsafeBytes(of: UInt32(body.count).bigEndian) { Array($0) } + body
    }

    static func frame(_ json: String) -> [UInt8] { frame(Array(json.utf8)) }
}

/// A blocking protocol client for fault tests. Unlike a strict test client it tolerates what
/// a real client must tolerate: a patch out of step makes it send one `resync` and ignore patches
/// until the next snapshot (PROTOCOL.md §6), and it counts how often that happened.
///
/// Blocking: use it from a plain thread (`offPool`, `runThreads`), never from the cooperative pool.
final class FaultClient: @unchecked Sendable {
    // Invariant for @unchecked Sendable: one thread drives one client at a time.
    struct Closed: Error, CustomStringConvertible {
        let waitingFor: String
        var description: String { "the server closed the connection while waiting for \(waitingFor)" }
    }
    struct Timeout: Error, CustomStringConvertible {
        let waitingFor: String
        var description: String { "timed out waiting for \(waitingFor)" }
    }

    let fd: Int32
    private var decoder = FrameDecoder(maximumFrameSize: FrameLimits.serverToClient)
    private let encoder = FrameEncoder(maximumFrameSize: 64 << 20)
    private(set) var document: JSONValue = .null
    private(set) var epoch = 0
    private(set) var seq = 0
    private(set) var received: [ServerMessage] = []
    private(set) var isClosed = false
    private(set) var outOfStep = 0
    private var awaitingSnapshot = false
    private var nextID = 1
    private var open = true

    init(path: String, timeout: Double = generousDeadline) throws {
        // Past the deadline, one last try throws why it cannot connect.
        fd = try firstConnection(timeout: timeout) { try RawSocket.connect(path) } ?? RawSocket.connect(path)
    }

    deinit { if open { close(fd) } }

    func disconnect() {
        guard open else { return }
        open = false
        close(fd)
    }

    @discardableResult
    func sendRaw(_ bytes: [UInt8]) -> Bool { RawSocket.sendAll(fd, bytes) }

    @discardableResult
    func send(_ message: ClientMessage) -> Bool { sendRaw((try? encoder.encode(message)) ?? []) }

    func helloMessage(key: String) -> ClientMessage {
        .hello(.init(protocolVersions: 1...1, client: .init(name: "fault-test", build: "0"), sessionKey: key))
    }

    /// Says hello and waits for `welcome` and its snapshot.
    @discardableResult
    func hello(key: String, timeout: Double = generousDeadline) throws -> ServerMessage.Welcome {
        send(helloMessage(key: key))
        let welcome = try next(where: "welcome", timeout: timeout) { message -> ServerMessage.Welcome? in
            if case .welcome(let w) = message { return w }
            return nil
        }
        _ = try next(where: "snapshot", timeout: timeout) { message -> Bool? in
            if case .snapshot = message { return true }
            return nil
        }
        return welcome
    }

    /// The id the next intent will carry.
    var peekIntentID: Int { nextID }

    /// Sends an intent without waiting; returns its id.
    @discardableResult
    func sendIntent(_ screen: String, _ action: String, _ args: [String: JSONValue]? = nil) -> Int {
        let id = nextID
        nextID += 1
        send(.intent(.init(id: id, screen: screen, action: action, args: args)))
        return id
    }

    /// An intent's whole frame, not sent (a test sends it in pieces, or several at once).
    func intentFrame(_ screen: String, _ action: String, _ args: [String: JSONValue]? = nil) -> (id: Int, bytes: [UInt8]) {
        let id = nextID
        nextID += 1
        return (id, (try? encoder.encode(.intent(.init(id: id, screen: screen, action: action, args: args)))) ?? [])
    }

    /// Waits for the reply to intent `id`.
    func reply(to id: Int, timeout: Double = generousDeadline) throws -> ServerMessage.Reply {
        try next(where: "reply \(id)", timeout: timeout) { message -> ServerMessage.Reply? in
            if case .reply(let reply) = message, reply.id == id { return reply }
            return nil
        }
    }

    /// Sends an intent and waits for its reply.
    @discardableResult
    func intent(_ screen: String, _ action: String, _ args: [String: JSONValue]? = nil,
                timeout: Double = generousDeadline) throws -> ServerMessage.Reply {
        let id = sendIntent(screen, action, args)
        return try next(where: "reply \(id) (\(screen)/\(action))", timeout: timeout) { message -> ServerMessage.Reply? in
            if case .reply(let reply) = message, reply.id == id { return reply }
            return nil
        }
    }

    /// One message, or nil when the server closed the connection; throws Timeout.
    func readMessage(timeout: Double) throws -> ServerMessage? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let frame = try decoder.nextFrame() {
                let message = try ServerMessage(frame: frame)
                received.append(message)
                apply(message)
                return message
            }
            if isClosed { return nil }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw Timeout(waitingFor: "a message") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(max(1, min(remaining, 1) * 1000)))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if count <= 0 {
                isClosed = true
                continue
            }
            decoder.feed(buffer[0..<count])
        }
    }

    /// Reads until `match` returns non-nil.
    func next<T>(where what: String, timeout: Double = generousDeadline, _ match: (ServerMessage) -> T?) throws -> T {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw Timeout(waitingFor: what) }
            let message: ServerMessage?
            do {
                message = try readMessage(timeout: remaining)
            } catch is Timeout {
                throw Timeout(waitingFor: what)
            }
            guard let message else { throw Closed(waitingFor: what) }
            if let found = match(message) { return found }
        }
    }

    /// Reads everything until the server closes (true) or `timeout` passes (false).
    func drainUntilClosed(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while deadline.timeIntervalSinceNow > 0 {
            do {
                if try readMessage(timeout: deadline.timeIntervalSinceNow) == nil { return true }
            } catch {
                return isClosed
            }
        }
        return isClosed
    }

    /// Reads what arrives until `condition` holds (true) or `timeout` passes or the server
    /// closes (false): waits for an outcome, never for a quiet spell of a guessed length.
    func readUntil(timeout: Double = generousDeadline, _ condition: (FaultClient) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition(self) {
            guard deadline.timeIntervalSinceNow > 0, !isClosed else { return false }
            do {
                if try readMessage(timeout: min(1, deadline.timeIntervalSinceNow)) == nil { return condition(self) }
            } catch {
                continue  // nothing this second: look at the condition and the deadline again
            }
        }
        return true
    }

    /// Reads whatever arrives until the line is quiet for `quiet` seconds.
    func drainUntilQuiet(quiet: Double = 0.5, limit: Double = 20) {
        let deadline = Date().addingTimeInterval(limit)
        while deadline.timeIntervalSinceNow > 0 {
            do {
                if try readMessage(timeout: quiet) == nil { return }
            } catch {
                return
            }
        }
    }

    private func apply(_ message: ServerMessage) {
        switch message {
        case .snapshot(let snapshot):
            document = snapshot.state
            epoch = snapshot.epoch
            seq = snapshot.seq
            awaitingSnapshot = false
        case .patch(let patch):
            guard !awaitingSnapshot else { return }
            guard patch.epoch == epoch, patch.seq == seq + 1,
                  let patched = try? JSONPatch.apply(patch.ops, to: document) else {
                outOfStep += 1
                awaitingSnapshot = true
                send(.resync)
                return
            }
            document = patched
            seq = patch.seq
        default:
            break
        }
    }

    // MARK: reading the document

    var screens: [JSONValue] { document.objectValue?["screens"]?.arrayValue ?? [] }
    var listState: [String: JSONValue] { screens.first?.objectValue?["state"]?.objectValue ?? [:] }
    var rows: [[String: JSONValue]] { (listState["users"]?.arrayValue ?? []).compactMap(\.objectValue) }
    var userIDs: [String] { rows.compactMap { $0["id"]?.stringValue } }
}

extension ServerMessage.Reply {
    var isOK: Bool { if case .success = outcome { true } else { false } }
    var result: JSONValue? { if case .success(let result) = outcome { result } else { nil } }
    var failure: ServerMessage.ErrorBody? { if case .failure(let body) = outcome { body } else { nil } }
}
