import Glibc
import UserListWire
import ThreadLocks
import Synchronization

/// How a connection leaves its loop other than by a plain `close()`: handed to the next
/// process of the daemon, or closed once what is queued has been read.
extension Connection {
    /// Reads what the peer has sent so far, once (as a wake-up would), then stops reading for
    /// `reason`. A restart uses it: what a client sent before it began is handled by this
    /// process, not left waiting in the socket for the next one to start.
    package func pauseReadingAfterDraining(because reason: PauseReasons) {
        guard loop.isLoopThread else {
            loop.execute { [self] in pauseReadingAfterDraining(because: reason) }
            return
        }
        withUnsafeTemporaryAllocation(byteCount: 16 * 1024, alignment: 16) { readable(scratch: $0) }
        setReadingPaused(true, because: reason)
    }

    /// Gives the descriptor away instead of closing it, for the next process of the daemon: on
    /// the loop, marks the connection closed (nothing more is read or written here), stops
    /// watching the descriptor, tells the delegate `connectionClosed` (as a close would), and
    /// returns the descriptor, still open and out of the loop, with the bytes queued but not yet
    /// written and those read but not yet handled (the next process writes the first and reads
    /// the second before anything else, so both streams stay whole). Nil when the connection is
    /// closed or closing (those are closed as usual).
    package func handOver() async -> HandedOver? {
        await withCheckedContinuation { (taken: CheckedContinuation<HandedOver?, Never>) in
            loop.execute { [self] in taken.resume(returning: handOverOnLoop()) }
        }
    }

    /// A descriptor given away, and the bytes in flight either way.
    package struct HandedOver: Sendable {
        package let fd: Int32
        package let unsent: [UInt8]
        package let unhandled: [UInt8]
    }

    func handOverOnLoop() -> HandedOver? {
        let taken = outbound.withValue { out -> (LoopRegistration?, (any ConnectionDelegate)?, [UInt8])? in
            guard !out.closed, !out.closeWhenDrained else { return nil }
            out.closed = true
            closedFlag.store(true, ordering: .releasing)
            var unsent: [UInt8] = []
            for (index, frame) in out.frames.enumerated() {
                unsent.append(contentsOf: frame.frame.bytes[(index == 0 ? out.headOffset : 0)...])
            }
            out.frames = []
            out.queuedBytes = 0
            publish(out)
            let delegate = out.delegate
            out.delegate = nil
            return (out.registration, delegate, unsent)
        }
        guard let (registration, delegate, unsent) = taken else { return nil }
        if let registration { loop.deregister(registration) }  // at once: this is the loop thread
        let unhandled = delegate?.takeUnhandledInput(self) ?? []
        delegate?.connectionClosed(self)
        return HandedOver(fd: fd, unsent: unsent, unhandled: unhandled)
    }

    /// Closes once what is queued has been written, so the peer reads why (a fatal error, a
    /// goodbye). Never blocks: a peer that does not read is closed after `grace` regardless.
    package func closeAfterFlush(grace: Duration = .seconds(3)) {
        guard loop.isLoopThread else {
            loop.execute { [self] in closeAfterFlush(grace: grace) }  // after the frames sent before it
            return
        }
        let drained = outbound.withValue { out -> Bool in
            guard !out.closed else { return false }
            out.closeWhenDrained = true
            flushLocked(&out)
            if out.frames.isEmpty { return true }
            // Keep reading (and discarding) so a peer blocked in send() gets to read its goodbye.
            out.pauseReasons = []
            setInterest(&out, write: true, paused: false)
            return false
        }
        if drained {
            close()
        } else {
            loop.execute(after: grace) { [self] in close() }
        }
    }
}
