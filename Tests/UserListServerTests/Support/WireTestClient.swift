import Foundation
import Glibc
import UserListServer
import UserListTestSupport
import UserListWire

/// A blocking protocol client for tests: raw frames over a real Unix socket, with timeouts, and
/// a local copy of the state document kept by applying patches exactly as a real client must.
///
/// Its waits block, so the async wrappers run them through `offPool`: a blocked cooperative
/// thread would starve the in-process daemon (two cores, two cooperative threads).
// Invariant for @unchecked Sendable: one test drives one client, one call at a time.
final class WireTestClient: @unchecked Sendable {
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
    private(set) var closedByServer = false

    init(path: String) throws {
        fd = try UnixSocket.connect(to: path)
    }

    deinit { close(fd) }

    func sendRaw(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return }
            offset += written
        }
    }

    func send(_ message: ClientMessage) throws { sendRaw(try encoder.encode(message)) }

    func sendJSON(_ text: String) {
        let body = Array(text.utf8)
        var frame: [UInt8] = withUnsafeBytes(of: UInt32(body.count).bigEndian) { Array($0) }
        frame += body
        sendRaw(frame)
    }

    /// `client`: the name the hello gives (history records it with the session's writes).
    func blockingHello(key: String, versions: ClosedRange<Int> = 1...1,
                       client: String = "test") throws -> ServerMessage.Welcome {
        try send(.hello(.init(protocolVersions: versions, client: .init(name: client, build: "0"), sessionKey: key)))
        let welcome = try blockingNext(where: "welcome") { if case .welcome(let w) = $0 { w } else { nil } }
        _ = try blockingNext(where: "snapshot") { if case .snapshot = $0 { true } else { nil } }
        return welcome
    }

    private var nextIntentID = 1

    /// Sends an intent and waits for its reply.
    @discardableResult
    func blockingIntent(_ screen: String, _ action: String, _ args: [String: JSONValue]? = nil,
                        timeout: Double = generousDeadline) throws -> ServerMessage.Reply {
        let id = nextIntentID
        nextIntentID += 1
        try send(.intent(.init(id: id, screen: screen, action: action, args: args)))
        return try blockingNext(where: "reply \(id)", timeout: timeout) {
            if case .reply(let reply) = $0, reply.id == id { reply } else { nil }
        }
    }

    /// Reads messages (applying snapshots and patches) until `match` returns non-nil.
    func blockingNext<T>(where what: String, timeout: Double = generousDeadline, _ match: (ServerMessage) -> T?) throws -> T {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            while let frame = try decoder.nextFrame() {
                let message = try ServerMessage(frame: frame)
                received.append(message)
                apply(message)
                if let found = match(message) { return found }
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw Timeout(waitingFor: what) }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(min(remaining, 1) * 1000)) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 {
                closedByServer = true
                throw Timeout(waitingFor: "\(what) (the server closed the connection)")
            }
            decoder.feed(buffer[0..<count])
        }
    }

    /// Waits until the local document satisfies `condition`.
    func blockingWaitForState(_ what: String, timeout: Double = generousDeadline, _ condition: (JSONValue) -> Bool) throws {
        if condition(document) { return }
        _ = try blockingNext(where: what, timeout: timeout) { _ in condition(document) ? true : nil }
    }

    /// Waits for an error frame and returns it.
    func blockingNextError(timeout: Double = generousDeadline) throws -> ServerMessage.ErrorMessage {
        try blockingNext(where: "error frame", timeout: timeout) { if case .error(let e) = $0 { e } else { nil } }
    }

    /// True when the server closes the connection within `timeout`.
    func blockingWaitForClose(timeout: Double = generousDeadline) -> Bool {
        do {
            _ = try blockingNext(where: "close", timeout: timeout) { _ -> Bool? in nil }
        } catch {
            return closedByServer
        }
        return closedByServer
    }

    // MARK: async wrappers (off the cooperative pool)

    func hello(key: String, versions: ClosedRange<Int> = 1...1,
               client: String = "test") async throws -> ServerMessage.Welcome {
        try await offPool { try self.blockingHello(key: key, versions: versions, client: client) }
    }

    @discardableResult
    func intent(_ screen: String, _ action: String, _ args: [String: JSONValue]? = nil,
                timeout: Double = generousDeadline) async throws -> ServerMessage.Reply {
        try await offPool { try self.blockingIntent(screen, action, args, timeout: timeout) }
    }

    func next<T: Sendable>(where what: String, timeout: Double = generousDeadline,
                           _ match: @escaping @Sendable (ServerMessage) -> T?) async throws -> T {
        try await offPool { try self.blockingNext(where: what, timeout: timeout, match) }
    }

    func waitForState(_ what: String, timeout: Double = generousDeadline,
                      _ condition: @escaping @Sendable (JSONValue) -> Bool) async throws {
        try await offPool { try self.blockingWaitForState(what, timeout: timeout, condition) }
    }

    func nextError(timeout: Double = generousDeadline) async throws -> ServerMessage.ErrorMessage {
        try await offPool { try self.blockingNextError(timeout: timeout) }
    }

    func waitForClose(timeout: Double = generousDeadline) async -> Bool {
        (try? await offPool { self.blockingWaitForClose(timeout: timeout) }) ?? false
    }

    private func apply(_ message: ServerMessage) {
        switch message {
        case .snapshot(let snapshot):
            document = snapshot.state
            epoch = snapshot.epoch
            seq = snapshot.seq
        case .patch(let patch):
            precondition(patch.epoch == epoch && patch.seq == seq + 1, "patch out of sequence")
            document = try! JSONPatch.apply(patch.ops, to: document)
            seq = patch.seq
        default:
            break
        }
    }

    // MARK: reading the document

    var screens: [JSONValue] { document.objectValue?["screens"]?.arrayValue ?? [] }
    var listState: [String: JSONValue] { screens.first?.objectValue?["state"]?.objectValue ?? [:] }
    var rows: [[String: JSONValue]] { (listState["users"]?.arrayValue ?? []).compactMap(\.objectValue) }
    var detailState: [String: JSONValue]? {
        guard screens.count > 1 else { return nil }
        return screens.last?.objectValue?["state"]?.objectValue
    }
}
