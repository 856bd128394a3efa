import Glibc
import UserListWire

/// Opens many sessions, each on its own connection (hello + `on_appear`), read through one
/// epoll set, and times when the last snapshot and the last load reply arrive.
struct ManySessions {
    let connections: ConnectionSet
    let started: UInt64
    /// Arrival of the last snapshot (hello → snapshot for all) and of the last `on_appear` reply.
    let lastSnapshot: UInt64
    let lastLoaded: UInt64

    static func open(socketPath: String, count: Int, keyPrefix: String,
                     seconds: Double = 120) throws(BenchError) -> ManySessions {
        let encoder = FrameEncoder(maximumFrameSize: FrameLimits.clientToServer)
        let set = try ConnectionSet()
        var snapshots = [Bool](repeating: false, count: count)
        var loaded = [Bool](repeating: false, count: count)
        var snapshotCount = 0, loadedCount = 0
        var lastSnapshot: UInt64 = 0, lastLoaded: UInt64 = 0
        var refusal: String?
        let onFrame = { (index: Int, frame: [UInt8], at: UInt64) in
            switch frameType(frame) {
            case "snapshot" where !snapshots[index]:
                snapshots[index] = true
                snapshotCount += 1
                lastSnapshot = max(lastSnapshot, at)
            case "reply" where !loaded[index]:
                loaded[index] = true
                loadedCount += 1
                lastLoaded = max(lastLoaded, at)
            case "error":
                refusal = String(decoding: frame.prefix(300), as: UTF8.self)
            default: break
            }
        }
        let started = monotonicNanos()
        let until = deadline(seconds: seconds)
        for index in 0..<count {
            let fd: Int32
            do throws(BenchError) { fd = try Sockets.connect(socketPath) } catch {
                throw BenchError("connection \(index + 1) of \(count): \(error)")
            }
            let frames = try attachFrames(encoder, sessionKey: "\(keyPrefix)-\(index)")
            Sockets.setSendTimeout(fd, seconds: 10)
            try Sockets.writeAll(fd, frames)
            try set.add(fd)
            if index % 32 == 31 { while set.pump(timeoutMillis: 0, onFrame) > 0 {} }
            if let refusal { throw BenchError("the daemon refused session \(index + 1): \(refusal)") }
            if monotonicNanos() > until {
                throw BenchError("opened only \(index + 1) of \(count) connections in \(Int(seconds)) s")
            }
        }
        while (snapshotCount < count || loadedCount < count) && monotonicNanos() < until {
            set.pump(timeoutMillis: 100, onFrame)
            if let refusal { throw BenchError("the daemon refused a session: \(refusal)") }
            if set.closedCount > 0 {
                throw BenchError("the daemon closed \(set.closedCount) of \(count) connections while attaching")
            }
        }
        guard snapshotCount == count && loadedCount == count else {
            throw BenchError("after \(Int(seconds)) s only \(snapshotCount) of \(count) snapshots and \(loadedCount) "
                             + "loads had arrived")
        }
        return ManySessions(connections: set, started: started, lastSnapshot: lastSnapshot, lastLoaded: lastLoaded)
    }

    /// A session's hello and its list's `on_appear`, sent together.
    static func attachFrames(_ encoder: FrameEncoder, sessionKey: String) throws(BenchError) -> [UInt8] {
        var frames: [UInt8] = []
        do throws(FrameError) {
            try encoder.encode(ClientMessage.hello(.init(protocolVersions: ProtocolVersion.supported,
                client: PeerInfo(name: "userlistd-bench", build: "1"), sessionKey: sessionKey)), into: &frames)
            try encoder.encode(ClientMessage.intent(.init(id: 1, screen: "list", action: "on_appear")), into: &frames)
        } catch { throw BenchError("encode: \(error)") }
        return frames
    }
}

/// The `type` of a server frame without parsing it: the daemon sorts keys, and "type" sorts last
/// in every message, so the frame ends with `"type":"<name>"}`.
func frameType(_ frame: [UInt8]) -> String? {
    guard frame.count > 10, frame.last == UInt8(ascii: "}") else { return nil }
    var end = frame.count - 2  // the closing quote
    guard frame[end] == UInt8(ascii: "\"") else { return nil }
    var start = end - 1
    while start > 0 && frame[start] != UInt8(ascii: "\"") { start -= 1 }
    let name = String(decoding: frame[(start + 1)..<end], as: UTF8.self)
    end = start
    return frame[..<end].suffix(7).elementsEqual("\"type\":".utf8) ? name : nil
}
