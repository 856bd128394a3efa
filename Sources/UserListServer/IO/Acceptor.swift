import CLinuxIO
import Glibc
import UserListWire

/// Accepts connections on the listening socket (on the event loop) and gives each a
/// `ClientHandler`, after the per-uid connection limit.
package final class Acceptor: EventLoopHandler, Sendable {
    private let listenFD: Int32
    private let loop: EventLoop
    private let context: ServerContext
    // Invariant: set once in init, before the loop runs any event for it.
    nonisolated(unsafe) private var registration: LoopRegistration?

    package init(listenFD: Int32, loop: EventLoop, context: ServerContext) throws(SystemError) {
        self.listenFD = listenFD
        self.loop = loop
        self.context = context
        UnixSocket.setNonBlocking(listenFD)
        registration = try loop.register(listenFD, handler: self)
    }

    package func readable(scratch: UnsafeMutableRawBufferPointer) {
        // Drain the backlog (bounded per wake-up so reads of open connections are not starved):
        // a connect storm must not leave the kernel's queue full for everyone else.
        for _ in 0..<1024 {
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
                fd: fd, peer: peer, loop: loop,
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

    /// Sent, best effort, to a client closed for falling past the hard limit.
    private static let slowClientFarewell: [UInt8]? =
        try? FrameEncoder(maximumFrameSize: FrameLimits.serverToClient).encode(ServerMessage.goodbye(reason: "slow_client"))

    /// Tells a client over its uid's limit why, in one non-blocking write, and closes it: here,
    /// once, before it was ever registered.
    private func refuse(_ fd: Int32, _ reason: String) {
        let message = ServerMessage.error(.init(code: .tooManyConnections, message: reason))
        if let frame = try? FrameEncoder(maximumFrameSize: FrameLimits.serverToClient).encode(message) {
            _ = frame.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) }
        }
        Glibc.close(fd)
    }

    package func writable() {}
    package func hangup() {}

    /// Stops accepting (shutdown); the descriptor is closed by the daemon.
    package func stop() {
        if let registration { loop.deregister(registration) }
    }
}
