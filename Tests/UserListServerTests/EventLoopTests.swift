import Foundation
import Glibc
import Synchronization
import Testing
import UserListTestSupport
import UserListServer

/// Descriptor numbers are reused as soon as they are closed: the loop tells registrations apart
/// by generation, so a late event or a late close for an old connection never reaches the new one.
@Suite struct EventLoopTests {
    final class Recorder: EventLoopHandler {
        let reads = Atomic<Int>(0)
        /// Beats after every read.
        let read = Pulse()
        let fd: Int32
        init(fd: Int32) { self.fd = fd }
        func readable(scratch: UnsafeMutableRawBufferPointer) {
            let count = recv(fd, scratch.baseAddress, scratch.count, Int32(MSG_DONTWAIT))
            if count > 0 { reads.add(count, ordering: .relaxed) }
            read.beat()
        }
        func writable() {}
        func hangup() {}
    }

    /// Registers on the loop's thread, as the daemon does (the registry is the loop's alone).
    static func register(_ fd: Int32, handler: any EventLoopHandler, on loop: EventLoop) async throws -> LoopRegistration {
        let result = await withCheckedContinuation { continuation in
            loop.execute {
                continuation.resume(returning: Result { () throws(SystemError) in try loop.register(fd, handler: handler) })
            }
        }
        return try result.get()
    }

    static func socketPair() -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        return (fds[0], fds[1])
    }

    @Test(.timeLimit(.minutes(5)))
    func aStaleRegistrationNeverTouchesTheDescriptorThatReusedItsNumber() async throws {
        let loop = try EventLoop()
        loop.start(name: "test-loop")
        defer { loop.stop() }

        let (oldServer, oldPeer) = Self.socketPair()
        let old = try await Self.register(oldServer, handler: Recorder(fd: oldServer), on: loop)
        let closed = Flag()
        loop.closeOnLoop(old) { closed.set() }
        #expect(await closed.wait())
        close(oldPeer)

        let (newServer, newPeer) = Self.socketPair()
        defer { close(newPeer) }
        let recorder = Recorder(fd: newServer)
        let new = try await Self.register(newServer, handler: recorder, on: loop)
        if newServer == oldServer {
            #expect(new != old, "same number, another generation")
        }
        // The old connection's late deregistration must leave the new one watched.
        loop.deregister(old)
        _ = "ping".withCString { Glibc.send(newPeer, $0, 4, Int32(MSG_NOSIGNAL)) }
        #expect(await recorder.read.until { recorder.reads.load(ordering: .relaxed) == 4 })
        let done = Flag()
        loop.closeOnLoop(new) { done.set() }
        #expect(await done.wait())
    }

    final class ClosingDelegate: ConnectionDelegate {
        func connection(_ connection: Connection, received bytes: UnsafeRawBufferPointer) {}
        func connectionOverflowed(_ connection: Connection) {}
        func connectionDrained(_ connection: Connection) {}
        func connectionClosed(_ connection: Connection) {}
    }

    /// A connection started from another thread than its loop's (the acceptor's loop hands
    /// connections to the others), whose peer is already gone: the loop may see the hangup and
    /// close it before `start` returns. The close must still take it out of the loop, or the
    /// loop keeps it (and its descriptor number) forever.
    @Test(.timeLimit(.minutes(5)))
    func aConnectionClosedWhileItStartsIsReleasedByTheLoop() async throws {
        let loop = try EventLoop()
        loop.start(name: "test-loop")
        defer { loop.stop() }
        let live = LiveObjectCounts()
        for _ in 0..<20_000 {
            let (server, peer) = Self.socketPair()
            close(peer)
            let connection = Connection(fd: server, peer: UnixSocket.peerCredentials(server)!, loop: loop,
                                        limits: .init(), liveObjects: live)
            connection.start(delegate: ClosingDelegate())
        }
        let released = await eventually(timeout: .seconds(120)) {
            live.connections.load(ordering: .relaxed) == 0 && loop.registeredCount == 0
        }
        #expect(released, "connections alive: \(live.connections.load(ordering: .relaxed)), registered: \(loop.registeredCount)")
    }
}
