import Foundation
import Glibc

/// Redis 7 PUBLISH to N subscribers over a Unix socket, read the same way as the daemon's
/// sessions (one epoll reader): the yardstick PERF-NOTES.md uses. Returns the latencies and the
/// CPU time redis-server spent over the rounds, after one warm-up round (returned as `first`,
/// as the daemon's is); nil when redis-server is not installed.
enum RedisFanOut {
    static func binary() -> String? {
        for path in ["/usr/bin/redis-server", "/usr/local/bin/redis-server", "/usr/sbin/redis-server"]
        where FileManager.default.isExecutableFile(atPath: path) { return path }
        return nil
    }

    static func run(_ context: BenchContext, receivers: Int, payloadSize: Int, rounds: Int) throws(BenchError) -> (Samples, cpu: UInt64?, first: UInt64)? {
        guard let binary = binary() else { return nil }
        let socketPath = context.temporaryPath("redis.sock")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--port", "0", "--unixsocket", socketPath, "--unixsocketperm", "700", "--save", "",
                             "--appendonly", "no", "--maxclients", "20000", "--dir", context.directory]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { throw BenchError("cannot start redis-server: \(error)") }
        defer {
            process.terminate()
            let until = deadline(seconds: 5)
            while process.isRunning && monotonicNanos() < until { sleepMillis(5) }
        }
        // Wait for its socket.
        var publisherFD: Int32 = -1
        let startUntil = deadline(seconds: 10)
        while publisherFD < 0 {
            if let fd = try? Sockets.connect(socketPath) { publisherFD = fd; break }
            if monotonicNanos() > startUntil { throw BenchError("redis-server did not open \(socketPath) in 10 s") }
            sleepMillis(10)
        }
        defer { close(publisherFD) }
        Sockets.setReceiveTimeout(publisherFD, seconds: 5)

        let set = try ConnectionSet()
        let subscribe = Array("*2\r\n$9\r\nSUBSCRIBE\r\n$5\r\nbench\r\n".utf8)
        let confirmation = "*3\r\n$9\r\nsubscribe\r\n$5\r\nbench\r\n:1\r\n".utf8.count
        for _ in 0..<receivers {
            let fd = try Sockets.connect(socketPath)
            Sockets.setReceiveTimeout(fd, seconds: 5)
            try Sockets.writeAll(fd, subscribe)
            var reply = [UInt8](repeating: 0, count: confirmation)
            guard reply.withUnsafeMutableBytes({ Sockets.readExactly(fd, $0.baseAddress!, confirmation) }) else {
                close(fd)
                throw BenchError("a Redis subscriber got no confirmation")
            }
            try set.add(fd)
        }
        let payload = String(repeating: "x", count: payloadSize)
        let publish = Array("*3\r\n$7\r\nPUBLISH\r\n$5\r\nbench\r\n$\(payloadSize)\r\n\(payload)\r\n".utf8)
        let message = "*3\r\n$7\r\nmessage\r\n$5\r\nbench\r\n$\(payloadSize)\r\n\(payload)\r\n".utf8.count
        var samples = Samples()
        var first: UInt64 = 0
        var scratch = [UInt8](repeating: 0, count: 64)
        var cpuBefore = ProcessCPU.nanoseconds(pid: process.processIdentifier)
        for round in -1..<rounds {
            var received = [Int](repeating: 0, count: receivers)
            var remaining = receivers
            var last: UInt64 = 0
            let start = monotonicNanos()
            try Sockets.writeAll(publisherFD, publish)
            let until = deadline(seconds: 10)
            while remaining > 0 && monotonicNanos() < until {
                set.pumpBytes(timeoutMillis: 50) { index, count, at in
                    let before = received[index]
                    received[index] += count
                    if before < message && received[index] >= message {
                        remaining -= 1
                        last = max(last, at)
                    }
                }
            }
            guard remaining == 0 else { throw BenchError("\(remaining) Redis subscribers missed a message") }
            _ = recv(publisherFD, &scratch, scratch.count, 0)  // ":N\r\n"
            if round < 0 {
                first = last - start
                cpuBefore = ProcessCPU.nanoseconds(pid: process.processIdentifier)
            } else {
                samples.append(last - start)
            }
            sleepMillis(1)
        }
        let cpu = ProcessCPU.nanoseconds(pid: process.processIdentifier).flatMap { after in cpuBefore.map { after - $0 } }
        return (samples, cpu, first)
    }
}
