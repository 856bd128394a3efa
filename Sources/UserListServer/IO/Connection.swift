import Glibc
import UserListWire
import ThreadLocks
import Synchronization

/// What a connection tells whoever speaks the protocol over it. Called on the event loop thread
/// (or the thread that sent the frame that overflowed): implementations hand work to actors and
/// return at once.
package protocol ConnectionDelegate: AnyObject, Sendable {
    /// Raw bytes as they arrived; the delegate frames them.
    func connection(_ connection: Connection, received bytes: UnsafeRawBufferPointer)
    /// Droppable frames were thrown away: the peer's copy of the state is now behind.
    func connectionOverflowed(_ connection: Connection)
    /// The outbound queue overflowed earlier and has now drained: time for a fresh snapshot.
    func connectionDrained(_ connection: Connection)
    /// The connection is closed (peer gone, error, or `close()`); called exactly once.
    func connectionClosed(_ connection: Connection)
    /// The connection is being handed to the daemon's next process: the bytes received and not
    /// yet handled (frames held back, an unfinished frame), which the next process reads first.
    func takeUnhandledInput(_ connection: Connection) -> [UInt8]
}

extension ConnectionDelegate {
    package func takeUnhandledInput(_ connection: Connection) -> [UInt8] { [] }
}

/// A client socket that belongs to one event loop (`loop`): its reads, writes, interest changes
/// and close all happen on that loop's thread, as a swift-nio channel's do. Called from any other
/// thread (a session on another loop, the sweeps, a shutdown), a method hands itself to the loop
/// as a job, in order with the rest. Its state is `LoopBound`: no lock, and any use off the loop
/// traps.
///
/// Ownership: the connection holds its delegate only until it closes, so a closed connection and
/// its protocol handler free each other. The descriptor is closed on the loop, after `closed` is
/// set, so no write, read or epoll change can meet a reused descriptor number.
///
/// The outbound queue is bounded. Past `softLimit` bytes, queued frames marked droppable
/// (patches and snapshots) are thrown away and the delegate is told when the socket drains, so a
/// slow client costs bounded memory and gets one fresh snapshot instead of a backlog. Past
/// `hardLimit` (frames that are never dropped: replies, events, errors), the client is sent its
/// `farewell` frame, best effort, and closed.
package final class Connection: EventLoopHandler, Sendable {
    package struct Limits: Sendable {
        package var softLimit: Int
        package var hardLimit: Int
        package init(softLimit: Int = 256 * 1024, hardLimit: Int = 4 * 1024 * 1024) {
            self.softLimit = softLimit
            self.hardLimit = hardLimit
        }
    }

    struct Outbound {
        var frames: [(frame: OutgoingFrame, droppable: Bool)] = []
        var headOffset = 0
        var queuedBytes = 0
        var overflowed = false
        var closed = false
        /// Close as soon as the queue is written (after a fatal error or a goodbye).
        var closeWhenDrained = false
        var droppedFrames = 0
        // What epoll is asked to watch, kept so one change never undoes another.
        var wantsWrite = false
        var readingPaused = false
        /// Why reading is paused; reading resumes when no reason is left.
        var pauseReasons: PauseReasons = []
        /// Set once `start` registered the descriptor; nil again never (the loop drops stale events).
        var registration: LoopRegistration?
        /// Held until the close: the delegate holds the connection too, and this link is the one cut.
        var delegate: (any ConnectionDelegate)?
        /// Sent before closing a client that fell too far behind.
        var farewell: [UInt8]?
    }

    package let fd: Int32
    package let peer: PeerCredentials
    /// The loop that reads and writes this connection.
    package let loop: EventLoop
    let limits: Limits
    let outbound: LoopBound<Outbound>
    /// Copies of what other threads ask about (status, sweeps, tests), published by the loop.
    let closedFlag = Atomic<Bool>(false)
    private let queuedBytesNow = Atomic<Int>(0)
    private let droppedFramesNow = Atomic<Int>(0)

    private let liveObjects: LiveObjectCounts?

    package init(fd: Int32, peer: PeerCredentials, loop: EventLoop, limits: Limits,
                 liveObjects: LiveObjectCounts? = nil) {
        self.fd = fd
        self.peer = peer
        self.loop = loop
        self.limits = limits
        self.outbound = LoopBound(Outbound(), on: loop)
        self.liveObjects = liveObjects
        liveObjects?.connections.add(1, ordering: .relaxed)
    }

    deinit { liveObjects?.connections.subtract(1, ordering: .relaxed) }

    /// Registers with the loop, on the loop; reads start flowing to `delegate`. `farewell` is the
    /// frame sent before closing a client that fell too far behind. A connection that cannot be
    /// watched is closed (its delegate told) and `failed` hears why. `input`: bytes a previous
    /// process of the daemon read from this socket and did not handle, given to the delegate first.
    package func start(delegate: any ConnectionDelegate, farewell: [UInt8]? = nil, replaying input: [UInt8] = [],
                       failed: @escaping @Sendable (SystemError) -> Void = { _ in }) {
        guard loop.isLoopThread else {
            loop.execute { [self] in start(delegate: delegate, farewell: farewell, replaying: input, failed: failed) }
            return
        }
        UnixSocket.setNonBlocking(fd)
        do throws(SystemError) {
            let registration = try loop.register(fd, handler: self)
            outbound.withValue { out in
                out.farewell = farewell
                out.delegate = delegate
                out.registration = registration
                // A change asked for before the registration existed is applied now.
                if out.wantsWrite || out.readingPaused {
                    loop.setInterest(registration, write: out.wantsWrite, read: !out.readingPaused)
                }
            }
            // Before anything the socket holds: this job runs before the loop's next read.
            if !input.isEmpty { input.withUnsafeBytes { delegate.connection(self, received: $0) } }
        } catch {
            outbound.withValue { $0.delegate = delegate }
            close()
            failed(error)
        }
    }

    /// The delegate while the connection is open.
    var delegate: (any ConnectionDelegate)? { outbound.withValue { $0.closed ? nil : $0.delegate } }

    /// Runs `job` on the loop thread that reads this connection (see `EventLoop.execute`).
    package func onLoop(_ job: @escaping @Sendable () -> Void) { loop.execute(job) }

    /// Runs `job` on the connection's loop once `delay` has passed (the loop's timers).
    package func onLoop(after delay: Duration, _ job: @escaping @Sendable () -> Void) {
        loop.execute(after: delay, job)
    }

    /// Whether `close()` has run on the loop (the descriptor may still be closing).
    package var isClosed: Bool { closedFlag.load(ordering: .acquiring) }

    /// Bytes queued and not yet written (for status and tests), as of the loop's last write.
    package var queuedBytes: Int { queuedBytesNow.load(ordering: .relaxed) }
    package var droppedFrames: Int { droppedFramesNow.load(ordering: .relaxed) }

    /// Publishes the figures other threads read; on the loop, after each change.
    func publish(_ out: Outbound) {
        queuedBytesNow.store(out.queuedBytes, ordering: .relaxed)
        droppedFramesNow.store(out.droppedFrames, ordering: .relaxed)
    }

    // MARK: interest

    func setInterest(_ out: inout Outbound, write: Bool? = nil, paused: Bool? = nil) {
        let newWrite = write ?? out.wantsWrite
        let newPaused = paused ?? out.readingPaused
        guard newWrite != out.wantsWrite || newPaused != out.readingPaused else { return }
        out.wantsWrite = newWrite
        out.readingPaused = newPaused
        guard !out.closed, let registration = out.registration else { return }
        loop.setInterest(registration, write: newWrite, read: !newPaused)
    }

    /// Why a connection stops reading: each reason is set and cleared on its own.
    package struct PauseReasons: OptionSet, Sendable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The delegate's inbox is full (backpressure, nothing dropped).
        package static let inboxFull = PauseReasons(rawValue: 1)
        /// The peer's uid used its share of intents for this second (fairness between uids).
        package static let uidBudget = PauseReasons(rawValue: 2)
        /// The daemon is handing its connections to its next process (a restart).
        package static let handover = PauseReasons(rawValue: 4)
    }

    /// Stops (or resumes) reading from the socket for `reason`; reading goes on only when no
    /// reason is left.
    package func setReadingPaused(_ paused: Bool, because reason: PauseReasons) {
        guard loop.isLoopThread else {
            loop.execute { [self] in setReadingPaused(paused, because: reason) }
            return
        }
        outbound.withValue { out in
            guard !out.closed else { return }
            if paused { out.pauseReasons.insert(reason) } else { out.pauseReasons.remove(reason) }
            setInterest(&out, paused: !out.pauseReasons.isEmpty)
        }
    }

    // MARK: EventLoopHandler

    package func writable() {
        var drained = false
        var mustClose = false
        outbound.withValue { out in
            defer { publish(out) }
            guard !out.closed else { return }
            mustClose = !flushLocked(&out)
            if out.frames.isEmpty {
                setInterest(&out, write: false)
                if out.closeWhenDrained { mustClose = true }
                if out.overflowed {
                    out.overflowed = false
                    drained = true
                }
            }
        }
        if mustClose { close(); return }
        if drained { delegate?.connectionDrained(self) }
    }

    package func readable(scratch buffer: UnsafeMutableRawBufferPointer) {
        // Bounded per wake-up so one chatty client cannot starve the others on this loop.
        for _ in 0..<4 {
            // Safe to read the descriptor here: it is closed on this thread only, after `closed`.
            let (reading, closing, delegate) = outbound.withValue { out in
                (!out.readingPaused && !out.closed, out.closeWhenDrained, out.delegate)
            }
            guard reading else { return }
            let count = recv(fd, buffer.baseAddress, buffer.count, 0)
            if count > 0 {
                if closing { continue }  // closing: input is moot
                delegate?.connection(self, received: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                if count < buffer.count { return }
            } else if count == 0 {
                close()
                return
            } else {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { close() }
                return
            }
        }
    }

    package func hangup() { close() }

    /// Closes once: on the loop (a call from elsewhere goes there as a job), the descriptor is
    /// deregistered and closed, then the delegate is told and let go.
    package func close() {
        guard loop.isLoopThread else {
            loop.execute { [self] in close() }
            return
        }
        let closing = outbound.withValue { out -> (LoopRegistration?, (any ConnectionDelegate)?)? in
            guard !out.closed else { return nil }
            out.closed = true
            closedFlag.store(true, ordering: .releasing)
            out.frames = []
            out.queuedBytes = 0
            publish(out)
            let delegate = out.delegate
            out.delegate = nil
            return (out.registration, delegate)
        }
        guard let (registration, delegate) = closing else { return }
        guard let registration else {
            // Never registered (start failed): nothing can be reading it.
            Glibc.close(fd)
            delegate?.connectionClosed(self)
            return
        }
        loop.closeOnLoop(registration) { [self] in delegate?.connectionClosed(self) }
    }
}
