import CLinuxIO
import Glibc
import UserListWire

/// Accepts connections on the listening socket (on the group's first loop) and gives each a
/// `ClientHandler` on the group's loops in turn, after the per-uid connection limit.
package final class Acceptor: EventLoopHandler, Sendable {
    private let listenFD: Int32
    private let loops: EventLoopGroup
    private let context: ServerContext
    // Invariant: set once in init, before the loop runs any event for it.
    nonisolated(unsafe) private var registration: LoopRegistration?
    // Invariant: touched only on the loop thread (in `readable`).
    nonisolated(unsafe) private var lastRefusal: (reason: String, frame: [UInt8]?)?

    package init(listenFD: Int32, loops: EventLoopGroup, context: ServerContext) throws(SystemError) {
        self.listenFD = listenFD
        self.loops = loops
        self.context = context
        UnixSocket.setNonBlocking(listenFD)
        registration = try loops.first.register(listenFD, handler: self)
    }

    package func readable(scratch: UnsafeMutableRawBufferPointer) {
        // Two accepts per turn of the loop: between two turns the loop serves every other ready
        // descriptor, so a connect storm (150,000 connects a second from one uid here) delays
        // another uid's intent by two accepts (~15 µs), not by a thousand (~10 ms, measured:
        // 64 gave ~0.8 ms, 8 gave ~110 µs). The listening socket stays ready, so the next turn
        // takes the next two; attaching 10,000 clients costs what it did (`--only idle`).
        for _ in 0..<Self.acceptsPerTurn {
            let fd = ulio_accept_nonblocking(listenFD)
            if fd < 0 {
                if errno == EINTR { continue }
                if errno == EMFILE || errno == ENFILE {
                    context.logger.error("Out of file descriptors; new connections wait", ["ERRNO": String(errno)])
                }
                return
            }
            guard let peer = UnixSocket.peerCredentials(fd) else {
                close(fd)
                continue
            }
            guard context.registry.chargeConnect(uid: peer.uid, now: MonotonicClock.nanoseconds()) else {
                // A storm: answered and closed at once, before it costs a handler.
                refuse(fd, "uid \(peer.uid) opened more than \(context.registry.connectsPerSecondLimit) connections in the last second; try again in a moment.")
                continue
            }
            guard context.registry.connectionOpened(uid: peer.uid) else {
                refuse(fd, "uid \(peer.uid) already has \(context.registry.connectionLimit) connections open to userlistd.")
                continue
            }
            let connection = Connection(
                fd: fd, peer: peer, loop: loops.next(),
                limits: .init(softLimit: context.config.clientBufferBytes, hardLimit: max(context.config.clientBufferBytes * 16, 4 << 20)),
                liveObjects: context.liveObjects)
            let handler = ClientHandler(connection: connection, context: context)
            do throws(SystemError) {
                try connection.start(delegate: handler, farewell: Self.slowClientFarewell)
            } catch {
                context.logger.error("Could not watch a new connection: \(error)")
                connection.close()
            }
        }
    }

    static let acceptsPerTurn = 2

    /// Sent, best effort, to a client closed for falling past the hard limit.
    private static let slowClientFarewell: [UInt8]? =
        try? FrameEncoder(maximumFrameSize: FrameLimits.serverToClient).encode(ServerMessage.goodbye(reason: "slow_client"))

    /// Tells a client over its uid's limit why, in one non-blocking write, and closes it: here,
    /// once, before it was ever registered.
    private func refuse(_ fd: Int32, _ reason: String) {
        // A storm repeats one reason: its frame is encoded once (on the loop thread only).
        if lastRefusal?.reason != reason {
            let message = ServerMessage.error(.init(code: .tooManyConnections, message: reason))
            lastRefusal = (reason, try? FrameEncoder(maximumFrameSize: FrameLimits.serverToClient).encode(message))
        }
        if let frame = lastRefusal?.frame {
            _ = frame.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) }
        }
        Glibc.close(fd)
    }

    package func writable() {}
    package func hangup() {}

    /// Stops accepting (shutdown); the descriptor is closed by the daemon.
    package func stop() {
        if let registration { loops.first.deregister(registration) }
    }
}
