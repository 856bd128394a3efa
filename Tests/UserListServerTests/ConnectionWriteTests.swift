import Foundation
import Glibc
import Testing
import UserListServer
import UserListWire

/// A connection writes frames made of pieces (a client's envelope around operations shared with
/// other clients) through a socket that takes a few KiB at a time: the peer must read exactly
/// the frames' bytes in order, and a hand-over must pass on exactly the bytes not yet written,
/// wherever a write stopped (inside an envelope, inside the shared bytes).
@Suite(.timeLimit(.minutes(3))) struct ConnectionWriteTests {
    static func frames(count: Int) throws -> [OutgoingFrame] {
        let encoder = FrameEncoder(maximumFrameSize: FrameLimits.serverToClient)
        let ops = FrameEncoder.serializedOperations([.replace(path: "/screens/0/state/users/7/name",
                                                              value: .string(String(repeating: "Ada Lovelace ", count: 80)))])
        return try (0..<count).map { index in
            index % 3 == 2 ? OutgoingFrame(Array("{\"event\":\(index)}".utf8))
                : try encoder.patchFrame(epoch: 5, seq: index + 1, serializedOperations: ops)
        }
    }

    static func connection(sendBuffer: Int32) throws -> (Connection, peer: Int32, loop: EventLoop) {
        let (server, peer) = EventLoopTests.socketPair()
        var size = sendBuffer
        setsockopt(server, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let loop = try EventLoop()
        loop.start(name: "test-loop")
        let connection = Connection(fd: server, peer: UnixSocket.peerCredentials(server)!, loop: loop,
                                    limits: .init(softLimit: 1 << 20, hardLimit: 8 << 20), liveObjects: LiveObjectCounts())
        connection.start(delegate: EventLoopTests.ClosingDelegate())
        return (connection, peer, loop)
    }

    static func read(_ fd: Int32, upTo count: Int, blocking: Bool) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while received.count < count {
            let n = recv(fd, &buffer, min(buffer.count, count - received.count), blocking ? 0 : Int32(MSG_DONTWAIT))
            if n <= 0 { break }
            received.append(contentsOf: buffer[0..<n])
        }
        return received
    }

    @Test func aSlowPeerReadsEveryPieceInOrder() throws {
        let (connection, peer, loop) = try Self.connection(sendBuffer: 4_096)
        defer { connection.close(); close(peer); loop.stop() }
        let frames = try Self.frames(count: 300)
        for pair in stride(from: 0, to: frames.count, by: 2) {
            connection.send(frames[pair..<min(pair + 2, frames.count)].map { ($0, false) })
        }
        let expected = frames.flatMap(\.bytes)
        #expect(Self.read(peer, upTo: expected.count, blocking: true) == expected)
    }

    /// Frames sent to an empty queue are written straight from the caller's array; the socket
    /// takes part of them, and the rest (from inside a frame) is queued and written later.
    @Test func framesWrittenStraightThatTheSocketTakesInPartGoOnFromTheQueue() async throws {
        let (connection, peer, loop) = try Self.connection(sendBuffer: 4_096)
        defer { close(peer); loop.stop() }
        let frames = try Self.frames(count: 30)  // one call, under the soft limit, past the socket's buffer
        let expected = frames.flatMap(\.bytes)
        connection.send(frames.map { ($0, false) })
        let handed = try #require(await connection.handOver())
        defer { close(handed.fd) }
        let written = Self.read(peer, upTo: Int.max, blocking: false)
        #expect(!written.isEmpty && !handed.unsent.isEmpty, "the socket took some of it, not all")
        #expect(written + handed.unsent == expected)

        let (second, secondPeer, secondLoop) = try Self.connection(sendBuffer: 4_096)
        defer { second.close(); close(secondPeer); secondLoop.stop() }
        second.send(frames.map { ($0, false) })
        #expect(Self.read(secondPeer, upTo: expected.count, blocking: true) == expected)
    }

    @Test func aHandOverPassesOnExactlyTheBytesNotWritten() async throws {
        let (connection, peer, loop) = try Self.connection(sendBuffer: 4_096)
        defer { close(peer); loop.stop() }
        let frames = try Self.frames(count: 90)
        connection.send(frames.map { ($0, false) })
        // Take some, so the queue's head is a frame written part of the way.
        var written = Self.read(peer, upTo: 5_000, blocking: true)
        let handed = try #require(await connection.handOver())
        defer { close(handed.fd) }
        written += Self.read(peer, upTo: Int.max, blocking: false)
        #expect(written + handed.unsent == frames.flatMap(\.bytes))
        #expect(!handed.unsent.isEmpty)
    }
}
