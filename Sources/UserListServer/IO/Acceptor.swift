import CLinuxIO
import Foundation
import Glibc
import Synchronization
import ThreadLocks
import UserListWire

/// Accepts connections on the listening socket (on the group's first loop) and gives each a
/// `ClientHandler` on the group's loops in turn, after the per-uid connection limit.
package final class Acceptor: EventLoopHandler, Sendable {
    private let listenFD: Int32
    private let loops: EventLoopGroup
    private let context: ServerContext
    /// The listening socket's registration on the first loop, made in init (read by `stop()`
    /// on the daemon's thread, and by the loop).
    private let registration = Lock<LoopRegistration?>(nil)
    /// A descriptor kept open to be given up when the process runs out: with it, a connection
    /// waiting in the backlog can still be accepted, told why, and closed (-1 while given up).
    private let reserveFD = Atomic<Int32>(Acceptor.openReserve())
    private struct Refusals {
        /// A storm repeats one reason: its frame is encoded once.
        var last: (reason: String, frame: [UInt8]?)?
        /// Since when the process is out of descriptors, how many connections were refused for
        /// it, and when that was last logged (nil: not out).
        var shortage: (since: Int64, refused: Int, loggedAt: Int64)?
    }
    /// What the accepting loop remembers between turns.
    private let refusals: LoopBound<Refusals>
    /// Set by `stop()`: a pause that ends afterwards must not watch the socket again.
    private let stopped = Atomic<Bool>(false)

    package init(listenFD: Int32, loops: EventLoopGroup, context: ServerContext) throws(SystemError) {
        self.listenFD = listenFD
        self.loops = loops
        self.context = context
        self.refusals = LoopBound(Refusals(), on: loops.first)
        UnixSocket.setNonBlocking(listenFD)
        let registered = try loops.first.register(listenFD, handler: self)
        registration.withLock { $0 = registered }
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
                    if refuseForWantOfDescriptors(errno) { continue }
                }
                return
            }
            if let shortage = refusals.value.shortage {
                let seconds = Double(MonotonicClock.nanoseconds() - shortage.since) / 1e9
                context.logger.notice("File descriptors are available again; new connections are accepted",
                                      ["USERLISTD_REFUSED": String(shortage.refused),
                                       "USERLISTD_SHORTAGE_SECONDS": String(format: "%.1f", seconds)])
                refusals.value.shortage = nil
            }
            guard let peer = UnixSocket.peerCredentials(fd) else {
                close(fd)
                continue
            }
            guard context.registry.chargeConnect(uid: peer.uid, now: MonotonicClock.nanoseconds()) else {
                // A storm: answered and closed at once, before it costs a handler.
                refuse(fd,
                       "uid \(peer.uid) opened more than \(context.registry.connectsPerSecondLimit) connections "
                        + "in the last second; try again in a moment.")
                continue
            }
            guard context.registry.connectionOpened(uid: peer.uid) else {
                refuse(fd,
                       "uid \(peer.uid) already has \(context.registry.connectionLimit) connections open to userlistd.")
                continue
            }
            let connection = Connection(
                fd: fd, peer: peer, loop: loops.next(),
                limits: .init(softLimit: context.config.clientBufferBytes,
                              hardLimit: max(context.config.clientBufferBytes * 16, 4 << 20)),
                liveObjects: context.liveObjects)
            let handler = ClientHandler(connection: connection, context: context)
            // Registered by its own loop (as a job when that is another loop's thread).
            connection.start(delegate: handler, farewell: Self.slowClientFarewell) { [logger = context.logger] error in
                logger.error("Could not watch a new connection: \(error)")
            }
        }
    }

    static let acceptsPerTurn = 2

    // MARK: out of descriptors

    /// The process (EMFILE) or the system (ENFILE) has no descriptor left for the next
    /// connection. Left in the backlog it would keep the listening socket readable, and the loop
    /// would spin on it (and log each turn) until a descriptor came free, while the client
    /// waited without a word. Instead the reserve descriptor is given up for a moment: the
    /// connection is accepted, told why (`too_many_connections`), and closed. Returns whether
    /// accepting may go on this turn.
    private func refuseForWantOfDescriptors(_ code: Int32) -> Bool {
        let now = MonotonicClock.nanoseconds()
        if refusals.value.shortage == nil {
            refusals.value.shortage = (now, 0, now)
            context.logger.error("Out of file descriptors: new connections are refused until some close "
                                 + "(raise LimitNOFILE=)",
                                 ["ERRNO": String(code), "USERLISTD_OPEN_LIMIT": String(Self.openLimit())])
        }
        let reserve = reserveFD.exchange(-1, ordering: .relaxed)
        if reserve >= 0 {
            close(reserve)
            let fd = ulio_accept_nonblocking(listenFD)
            if fd >= 0 {
                refuse(fd,
                       "userlistd has run out of file descriptors (its limit is \(Self.openLimit())); "
                        + "try again when other clients have closed.")
                refusals.value.shortage?.refused += 1
            }
            reserveFD.store(Self.openReserve(), ordering: .relaxed)
        }
        if let logged = refusals.value.shortage?.loggedAt, now - logged >= Self.shortageLogIntervalNanoseconds {
            refusals.value.shortage?.loggedAt = now
            context.logger.error("Still out of file descriptors",
                                 ["USERLISTD_REFUSED": String(refusals.value.shortage?.refused ?? 0)])
        }
        guard reserveFD.load(ordering: .relaxed) >= 0 else {
            pauseAccepting()
            return false
        }
        return true
    }

    /// Without a reserve (another thread took the descriptor), nothing can be accepted: stop
    /// watching the listening socket for a moment rather than spin on it.
    private func pauseAccepting() {
        guard let registration = registration.withLock({ $0 }) else { return }
        loops.first.setInterest(registration, write: false, read: false)
        loops.first.execute(after: .milliseconds(Self.pauseMilliseconds)) { [weak self] in
            guard let self, !self.stopped.load(ordering: .relaxed) else { return }
            if self.reserveFD.load(ordering: .relaxed) < 0 {
                self.reserveFD.store(Self.openReserve(), ordering: .relaxed)
            }
            self.loops.first.setInterest(registration, write: false, read: true)
        }
    }

    static let pauseMilliseconds = 100
    static let shortageLogIntervalNanoseconds: Int64 = 10_000_000_000

    private static func openReserve() -> Int32 { open("/dev/null", O_RDONLY | O_CLOEXEC) }

    /// The soft limit on open descriptors (0 if unreadable), for the messages.
    private static func openLimit() -> UInt64 {
        var limit = rlimit()
        return getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 ? UInt64(limit.rlim_cur) : 0
    }

    /// Sent, best effort, to a client closed for falling past the hard limit.
    private static let slowClientFarewell: [UInt8]? =
        try? FrameEncoder(maximumFrameSize: FrameLimits.serverToClient)
            .encode(ServerMessage.goodbye(reason: "slow_client"))

    /// Tells a client over its uid's limit why, in one non-blocking write, and closes it: here,
    /// once, before it was ever registered.
    private func refuse(_ fd: Int32, _ reason: String) {
        // A storm repeats one reason: its frame is encoded once (on the loop thread only).
        if refusals.value.last?.reason != reason {
            let message = ServerMessage.error(.init(code: .tooManyConnections, message: reason))
            refusals.value.last = (reason,
                                   try? FrameEncoder(maximumFrameSize: FrameLimits.serverToClient).encode(message))
        }
        if let frame = refusals.value.last?.frame {
            _ = frame.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
            }
        }
        Glibc.close(fd)
    }

    package func writable() {}
    package func hangup() {}

    /// Stops accepting (shutdown); the descriptor is closed by the daemon.
    package func stop() {
        stopped.store(true, ordering: .relaxed)
        if let registration = registration.withLock({ $0 }) { loops.first.deregister(registration) }
    }

    deinit {
        let reserve = reserveFD.load(ordering: .relaxed)
        if reserve >= 0 { close(reserve) }
    }
}
