import CLinuxIO
import Glibc

/// The raw floor under an intent → patch round trip: a C-style echo server thread with plain
/// blocking Glibc sockets on a real Unix socket path. The client sends a frame of the intent's
/// size; the server reads it whole and answers with a frame of the patch's size. Neither side is
/// pinned (nor is the daemon), so both pay the same scheduler.
enum EchoBaseline {
    /// Round-trip samples for `rounds` exchanges of `requestSize` → `responseSize` byte frames
    /// (sizes include the 4-byte header).
    static func run(socketPath: String, requestSize: Int, responseSize: Int,
                    rounds: Int) throws(BenchError) -> Samples {
        let listenFD = try Sockets.bind(socketPath, type: Int32(SOCK_STREAM.rawValue))
        defer { close(listenFD); unlink(socketPath) }
        let response = Sockets.rawFrame(bodySize: max(1, responseSize - 4))
        let request = Sockets.rawFrame(bodySize: max(1, requestSize - 4))
        let server = BenchThread(name: "echo") {
            let fd = accept(listenFD, nil, nil)
            guard fd >= 0 else { return }
            defer { close(fd) }
            Sockets.setReceiveTimeout(fd, seconds: 10)
            var header = [UInt8](repeating: 0, count: 4)
            var body = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                guard header.withUnsafeMutableBytes({ Sockets.readExactly(fd, $0.baseAddress!, 4) }) else { return }
                let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
                guard length <= body.count,
                      body.withUnsafeMutableBytes({ Sockets.readExactly(fd, $0.baseAddress!, length) }) else { return }
                guard (try? Sockets.writeAll(fd, response)) != nil else { return }
            }
        }
        let fd = try Sockets.connect(socketPath)
        Sockets.setReceiveTimeout(fd, seconds: 10)
        var samples = Samples()
        var reply = [UInt8](repeating: 0, count: response.count)
        for _ in 0..<rounds {
            let start = monotonicNanos()
            try Sockets.writeAll(fd, request)
            guard reply.withUnsafeMutableBytes({ Sockets.readExactly(fd, $0.baseAddress!, 4) }) else {
                close(fd); throw BenchError("echo baseline: no reply header")
            }
            let length = Int(reply[0]) << 24 | Int(reply[1]) << 16 | Int(reply[2]) << 8 | Int(reply[3])
            guard reply.withUnsafeMutableBytes({ Sockets.readExactly(fd, $0.baseAddress!, length) }) else {
                close(fd); throw BenchError("echo baseline: short reply")
            }
            samples.append(monotonicNanos() - start)
        }
        close(fd)
        server.join(timeout: 5)
        return samples
    }
}
