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

    static func run(_ context: BenchContext, receivers: Int, payloadSize: Int,
                    rounds: Int) throws(BenchError) -> (Samples, cpu: UInt64?, first: UInt64)? {
        guard let binary = binary() else { return nil }
        let socketPath = context.temporaryPath("redis.sock")
        let process = try start(binary, socketPath: socketPath, directory: context.directory)
        defer {
            process.terminate()
            let until = deadline(seconds: 5)
            while process.isRunning && monotonicNanos() < until { sleepMillis(5) }
        }
        let publisherFD = try connectPublisher(socketPath)
        defer { close(publisherFD) }
        Sockets.setReceiveTimeout(publisherFD, seconds: 5)
        let set = try subscribe(socketPath, receivers: receivers)
        return try publishRounds(set, publisherFD: publisherFD, pid: process.processIdentifier, receivers: receivers,
                                 payloadSize: payloadSize, rounds: rounds)
    }

    /// redis-server on a Unix socket only, nothing saved to disk.
    static func start(_ binary: String, socketPath: String, directory: String) throws(BenchError) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--port", "0", "--unixsocket", socketPath, "--unixsocketperm", "700", "--save", "",
                             "--appendonly", "no", "--maxclients", "20000", "--dir", directory]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { throw BenchError("cannot start redis-server: \(error)") }
        return process
    }

    /// The publisher's connection, once the server's socket is there (10 s at most).
    static func connectPublisher(_ socketPath: String) throws(BenchError) -> Int32 {
        let startUntil = deadline(seconds: 10)
        while true {
            if let fd = try? Sockets.connect(socketPath) { return fd }
            if monotonicNanos() > startUntil { throw BenchError("redis-server did not open \(socketPath) in 10 s") }
            sleepMillis(10)
        }
    }

    /// N subscribers of channel `bench`, each confirmed, read through one epoll set.
    static func subscribe(_ socketPath: String, receivers: Int) throws(BenchError) -> ConnectionSet {
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
        return set
    }

    /// One warm-up round and `rounds` timed ones: PUBLISH → the last subscriber's message read
    /// whole; with redis-server's CPU over the timed rounds.
    static func publishRounds(_ set: ConnectionSet, publisherFD: Int32, pid: Int32, receivers: Int, payloadSize: Int,
                              rounds: Int) throws(BenchError) -> (Samples, cpu: UInt64?, first: UInt64) {
        let payload = String(repeating: "x", count: payloadSize)
        let publish = Array("*3\r\n$7\r\nPUBLISH\r\n$5\r\nbench\r\n$\(payloadSize)\r\n\(payload)\r\n".utf8)
        let message = "*3\r\n$7\r\nmessage\r\n$5\r\nbench\r\n$\(payloadSize)\r\n\(payload)\r\n".utf8.count
        var samples = Samples()
        var first: UInt64 = 0
        var scratch = [UInt8](repeating: 0, count: 64)
        var cpuBefore = ProcessCPU.nanoseconds(pid: pid)
        for round in -1..<rounds {
            let start = monotonicNanos()
            try Sockets.writeAll(publisherFD, publish)
            let last = try awaitMessages(set, receivers: receivers, messageBytes: message)
            _ = recv(publisherFD, &scratch, scratch.count, 0)  // ":N\r\n"
            if round < 0 {
                first = last - start
                cpuBefore = ProcessCPU.nanoseconds(pid: pid)
            } else {
                samples.append(last - start)
            }
            sleepMillis(1)
        }
        let cpu = ProcessCPU.nanoseconds(pid: pid).flatMap { after in cpuBefore.map { after - $0 } }
        return (samples, cpu, first)
    }

    /// Reads until every subscriber has a whole message (10 s at most); when the last was read.
    static func awaitMessages(_ set: ConnectionSet, receivers: Int,
                              messageBytes message: Int) throws(BenchError) -> UInt64 {
        var received = [Int](repeating: 0, count: receivers)
        var remaining = receivers
        var last: UInt64 = 0
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
        return last
    }
}
