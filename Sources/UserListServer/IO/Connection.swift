import Glibc
import Synchronization

/// What a connection tells whoever speaks the protocol over it. Called on the event loop thread:
/// implementations hand work to actors and return at once.
package protocol ConnectionDelegate: AnyObject, Sendable {
    /// Raw bytes as they arrived; the delegate frames them.
    func connection(_ connection: Connection, received bytes: UnsafeRawBufferPointer)
    /// The outbound queue overflowed earlier and has now drained: time for a fresh snapshot.
    func connectionDrained(_ connection: Connection)
    /// The connection is closed (peer gone, error, or `close()`); called exactly once.
    func connectionClosed(_ connection: Connection)
}

/// A client socket: reads on the event loop, writes from whichever thread has a frame to send.
///
/// The outbound queue is bounded. Past `softLimit` bytes, queued frames marked droppable (patches,
/// snapshots, events) are thrown away and the delegate is told when the socket drains, so a slow
/// client costs bounded memory and gets one fresh snapshot instead of a backlog. Past `hardLimit`
/// (only frames that must not be dropped, such as replies to a flood of intents), it is closed.
package final class Connection: EventLoopHandler, Sendable {
    package struct Limits: Sendable {
        package var softLimit: Int
        package var hardLimit: Int
        package init(softLimit: Int = 256 * 1024, hardLimit: Int = 4 * 1024 * 1024) {
            self.softLimit = softLimit
            self.hardLimit = hardLimit
        }
    }

    private struct Outbound {
        var frames: [(bytes: [UInt8], droppable: Bool)] = []
        var headOffset = 0
        var queuedBytes = 0
        var overflowed = false
        var closed = false
        var droppedFrames = 0
    }

    package let fd: Int32
    package let peer: PeerCredentials
    private let loop: EventLoop
    private let limits: Limits
    private let outbound = Mutex(Outbound())
    // Invariant: set once right after init, before the fd is registered with the loop.
    nonisolated(unsafe) private var delegateStorage: (any ConnectionDelegate)?

    package init(fd: Int32, peer: PeerCredentials, loop: EventLoop, limits: Limits) {
        self.fd = fd
        self.peer = peer
        self.loop = loop
        self.limits = limits
    }

    /// Registers with the loop; reads start flowing to `delegate`.
    package func start(delegate: any ConnectionDelegate) throws(SystemError) {
        delegateStorage = delegate
        UnixSocket.setNonBlocking(fd)
        try loop.register(fd, handler: self)
    }

    /// Bytes queued and not yet written (for status and tests).
    package var queuedBytes: Int { outbound.withLock { $0.queuedBytes } }
    package var droppedFrames: Int { outbound.withLock { $0.droppedFrames } }

    // MARK: writing

    /// Queues one whole frame (length prefix included) and writes what the socket takes now.
    package func send(_ frame: [UInt8], droppable: Bool) {
        var mustClose = false
        outbound.withLock { out in
            guard !out.closed else { return }
            if out.overflowed && droppable {
                out.droppedFrames += 1
                return
            }
            // An empty queue always takes the frame, however large: only a backlog is dropped.
            if droppable && out.queuedBytes > 0 && out.queuedBytes + frame.count > limits.softLimit {
                dropDroppable(&out)
                out.overflowed = true
                out.droppedFrames += 1
                // Writability tells us when the socket drains, even if nothing is left queued.
                loop.setWriteInterest(fd, true)
                return
            }
            if out.queuedBytes + frame.count > limits.hardLimit {
                mustClose = true
                return
            }
            let wasEmpty = out.frames.isEmpty
            out.frames.append((frame, droppable))
            out.queuedBytes += frame.count
            if wasEmpty {
                flushLocked(&out)
                if !out.frames.isEmpty { loop.setWriteInterest(fd, true) }
            }
        }
        if mustClose { close() }
    }

    /// Drops queued droppable frames, keeping a frame already partly written (the stream must stay whole).
    private func dropDroppable(_ out: inout Outbound) {
        var kept: [(bytes: [UInt8], droppable: Bool)] = []
        for (index, frame) in out.frames.enumerated() {
            if (index == 0 && out.headOffset > 0) || !frame.droppable {
                kept.append(frame)
            } else {
                out.droppedFrames += 1
            }
        }
        out.frames = kept
        out.queuedBytes = kept.reduce(0) { $0 + $1.bytes.count } - out.headOffset
    }

    /// Writes queued frames until the socket would block. Returns false on a fatal write error.
    @discardableResult
    private func flushLocked(_ out: inout Outbound) -> Bool {
        while let head = out.frames.first {
            let remaining = head.bytes.count - out.headOffset
            let written = head.bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + out.headOffset, remaining, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK { return true }
                if errno == EINTR { continue }
                out.frames.removeAll()
                out.queuedBytes = 0
                return false
            }
            out.queuedBytes -= written
            if written == remaining {
                out.frames.removeFirst()
                out.headOffset = 0
            } else {
                out.headOffset += written
            }
        }
        return true
    }

    // MARK: EventLoopHandler

    package func writable() {
        var drained = false
        var failed = false
        outbound.withLock { out in
            guard !out.closed else { return }
            failed = !flushLocked(&out)
            if out.frames.isEmpty {
                loop.setWriteInterest(fd, false)
                if out.overflowed {
                    out.overflowed = false
                    drained = true
                }
            }
        }
        if failed { close(); return }
        if drained { delegateStorage?.connectionDrained(self) }
    }

    package func readable() {
        // Bounded per wake-up so one chatty client cannot starve the others on this loop.
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        for _ in 0..<4 {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.withUnsafeBytes { raw in
                    delegateStorage?.connection(self, received: UnsafeRawBufferPointer(rebasing: raw[0..<count]))
                }
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

    /// Closes once: deregisters, closes the descriptor, tells the delegate.
    package func close() {
        let first = outbound.withLock { out -> Bool in
            guard !out.closed else { return false }
            out.closed = true
            out.frames.removeAll()
            out.queuedBytes = 0
            return true
        }
        guard first else { return }
        loop.deregister(fd)
        Glibc.close(fd)
        delegateStorage?.connectionClosed(self)
    }

    /// Writes what is queued (best effort, a short while) and then closes: used after a fatal
    /// error frame or a goodbye, so the peer reads why before the close.
    package func closeAfterFlush() {
        outbound.withLock { out in
            guard !out.closed else { return }
            UnixSocket.setBlockingWithTimeout(fd, milliseconds: 200)
            flushLocked(&out)
        }
        close()
    }
}
