import Glibc
import UserListWire

/// Writing: frames are queued in order and written on the loop, gathered with `writev`; a
/// queue past its limits drops what may be dropped or says farewell (see `Connection`).
extension Connection {
    /// Queues one whole frame (length prefix included) and writes what the socket takes now.
    package func send(_ frame: [UInt8], droppable: Bool) {
        send([(OutgoingFrame(frame), droppable)])
    }

    /// Queues frames in order and writes what the socket takes now, in one system call when it
    /// can (a patch and the event after it). Only this connection's loop writes its socket: from
    /// any other thread (a session on another loop, a sweep) the frames go to the loop as a job,
    /// in order with everything else sent from there.
    package func send(_ frames: [(frame: OutgoingFrame, droppable: Bool)]) {
        guard loop.isLoopThread else {
            loop.execute { [self] in send(frames) }
            return
        }
        enum Then { case nothing, overflowed, close, farewell }
        var then = Then.nothing
        outbound.withValue { out in
            defer { publish(out) }
            guard !out.closed, !out.closeWhenDrained else { return }
            if let fate = writeUnqueued(frames, &out) {
                if !fate { then = .close }
                return
            }
            let wasEmpty = out.frames.isEmpty
            for (frame, droppable) in frames {
                if out.overflowed && droppable {
                    out.droppedFrames += 1
                    continue
                }
                // An empty queue always takes the frame, however large: only a backlog is dropped.
                if droppable && out.queuedBytes > 0 && out.queuedBytes + frame.count > limits.softLimit {
                    dropDroppable(&out)
                    out.overflowed = true
                    out.droppedFrames += 1
                    // Writability tells us when the socket drains, even if nothing is left queued.
                    setInterest(&out, write: true)
                    then = .overflowed
                    continue
                }
                if out.queuedBytes + frame.count > limits.hardLimit {
                    sayFarewell(&out)
                    then = .farewell
                    return
                }
                out.frames.append((frame, droppable))
                out.queuedBytes += frame.count
            }
            if wasEmpty && !out.frames.isEmpty {
                if !flushLocked(&out) {
                    then = .close
                } else if !out.frames.isEmpty {
                    setInterest(&out, write: true)
                }
            }
        }
        switch then {
        case .nothing: break
        case .overflowed: delegate?.connectionOverflowed(self)
        case .close: close()
        case .farewell: closeAfterFlush()
        }
    }

    /// The client fell past the hard limit: keep only a partly written frame (the stream must
    /// stay whole) and the farewell; the caller closes once it is read or the grace time ends.
    private func sayFarewell(_ out: inout Outbound) {
        if out.headOffset > 0, let head = out.frames.first {
            out.frames = [head]
            out.queuedBytes = head.frame.count - out.headOffset
        } else {
            out.frames = []
            out.queuedBytes = 0
            out.headOffset = 0
        }
        if let farewell = out.farewell {
            out.frames.append((OutgoingFrame(farewell), false))
            out.queuedBytes += farewell.count
        }
    }

    /// Drops queued droppable frames, keeping a frame already partly written.
    private func dropDroppable(_ out: inout Outbound) {
        var kept: [(frame: OutgoingFrame, droppable: Bool)] = []
        for (index, frame) in out.frames.enumerated() {
            if (index == 0 && out.headOffset > 0) || !frame.droppable {
                kept.append(frame)
            } else {
                out.droppedFrames += 1
            }
        }
        out.frames = kept
        out.queuedBytes = kept.reduce(0) { $0 + $1.frame.count } - out.headOffset
    }

    /// The common case, a patch and its event to a client that keeps up: with nothing queued,
    /// the frames are written straight from the caller's array, and only what the socket did
    /// not take is queued (then written as usual). Nil when the frames must go through the
    /// queue (something is queued, or they could meet the limits); else whether the connection
    /// survived the write.
    private func writeUnqueued(_ frames: [(frame: OutgoingFrame, droppable: Bool)], _ out: inout Outbound) -> Bool? {
        guard out.frames.isEmpty, !out.overflowed, frames.count <= Self.framesPerWrite else { return nil }
        let total = frames.reduce(0) { $0 + $1.frame.count }
        // Under the soft limit, the queue would have taken every one of them (see `send`).
        guard total <= limits.softLimit else { return nil }
        var written: Int
        repeat {
            written = Self.writeGathered(fd, frames.lazy.map(\.frame), skippingHead: 0)
        } while written < 0 && errno == EINTR
        if written < 0 {
            guard errno == EAGAIN || errno == EWOULDBLOCK else { return false }
            written = 0
        }
        guard written < total else { return true }
        out.frames = frames
        out.headOffset = 0
        out.queuedBytes = total
        dropWritten(written, from: &out)
        guard flushLocked(&out) else { return false }
        if !out.frames.isEmpty { setInterest(&out, write: true) }
        return true
    }

    static let framesPerWrite = 64

    /// One `writev` of `frames` (each in up to three pieces, see `OutgoingFrame`), leaving out
    /// the first `skippingHead` bytes of the first: what `writev` returned.
    private static func writeGathered<Frames: Collection<OutgoingFrame>>(_ fd: Int32, _ frames: Frames,
                                                                         skippingHead: Int) -> Int {
        withUnsafeTemporaryAllocation(of: iovec.self, capacity: 3 * frames.count) { vectors -> Int in
            // The frames' storage stays alive: the caller holds them for the whole call.
            var used = 0
            var skip = skippingHead
            for frame in frames {
                frame.forEachPiece(skipping: skip) { base, count in
                    vectors[used] = iovec(iov_base: UnsafeMutableRawPointer(mutating: base), iov_len: count)
                    used += 1
                }
                skip = 0
            }
            return writev(fd, vectors.baseAddress, Int32(used))
        }
    }

    /// Writes queued frames until the socket would block, up to 64 frames per `writev`, so a
    /// patch and the event after it cost one system call. Returns false on a fatal write error.
    @discardableResult
    func flushLocked(_ out: inout Outbound) -> Bool {
        while !out.frames.isEmpty {
            let batch = min(out.frames.count, Self.framesPerWrite)
            let written = Self.writeGathered(fd, out.frames[..<batch].lazy.map(\.frame), skippingHead: out.headOffset)
            if written < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK { return true }
                if errno == EINTR { continue }
                out.frames.removeAll()
                out.queuedBytes = 0
                return false
            }
            dropWritten(written, from: &out)
            if written == 0 { return true }
        }
        return true
    }

    /// Takes `written` bytes off the head of the queue: whole frames, then part of the next.
    private func dropWritten(_ written: Int, from out: inout Outbound) {
        out.queuedBytes -= written
        var remaining = written
        while remaining > 0, let head = out.frames.first {
            let left = head.frame.count - out.headOffset
            if remaining >= left {
                remaining -= left
                out.frames.removeFirst()
                out.headOffset = 0
            } else {
                out.headOffset += remaining
                remaining = 0
            }
        }
    }
}
