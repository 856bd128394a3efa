/// Splits a byte stream into frames: a pure state machine with no I/O, so a socket reader, a test
/// and the fuzzer drive it the same way (feed bytes, then pull frames until `nil`).
///
/// It copes with whatever the kernel hands over: half a header, many frames in one read, a frame
/// split anywhere. The length is checked against the limit as soon as the 4 header bytes are
/// present, before any of the body is buffered, so a peer announcing 4 GiB costs 4 bytes of memory.
///
/// Errors: an empty frame is reported and skipped (the stream stays in step). An oversized header
/// is fatal: the decoder stops, since the next frame boundary cannot be known. At end of stream,
/// `finish()` reports a frame cut short.
public struct FrameDecoder: Sendable {
    private enum State: Sendable {
        case awaitingHeader
        case awaitingBody(length: Int)
        case failed
    }

    public let maximumFrameSize: Int
    private var state: State = .awaitingHeader
    private var buffer: [UInt8] = []
    private var readIndex = 0

    /// - Parameter maximumFrameSize: largest accepted body in bytes; the server decodes with
    ///   `FrameLimits.clientToServer`, a client with `FrameLimits.serverToClient`.
    public init(maximumFrameSize: Int) {
        precondition(maximumFrameSize > 0)
        self.maximumFrameSize = maximumFrameSize
    }

    /// Bytes received but not yet returned as frames.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Appends bytes read from the stream. Never fails; errors surface from `nextFrame()`.
    public mutating func feed(_ bytes: some Sequence<UInt8>) {
        if case .failed = state { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame body, or `nil` when more bytes are needed.
    ///
    /// After `FrameError.emptyFrame` calling again continues with the following frame; after a
    /// fatal error every call throws `FrameError.decoderFailed`.
    public mutating func nextFrame() throws(FrameError) -> [UInt8]? {
        while true {
            switch state {
            case .failed:
                throw .decoderFailed
            case .awaitingHeader:
                guard bufferedByteCount >= FrameLimits.headerSize else { return nil }
                let length = UInt32(buffer[readIndex]) << 24 | UInt32(buffer[readIndex + 1]) << 16
                    | UInt32(buffer[readIndex + 2]) << 8 | UInt32(buffer[readIndex + 3])
                readIndex += FrameLimits.headerSize
                if length == 0 { throw .emptyFrame }
                if UInt64(length) > UInt64(maximumFrameSize) {
                    state = .failed
                    buffer = []
                    readIndex = 0
                    throw .frameTooLarge(length: length, limit: maximumFrameSize)
                }
                state = .awaitingBody(length: Int(length))
            case .awaitingBody(let length):
                // No reserveCapacity(length) here: memory grows with bytes actually received, so a
                // peer announcing a large frame and sending nothing costs nothing.
                guard bufferedByteCount >= length else { return nil }
                let frame = Array(buffer[readIndex..<(readIndex + length)])
                readIndex += length
                state = .awaitingHeader
                return frame
            }
        }
    }

    /// Call when the stream has ended and `nextFrame()` returned `nil`: throws if the stream stopped
    /// inside a frame.
    public mutating func finish() throws(FrameError) {
        switch state {
        case .failed:
            return
        case .awaitingHeader:
            let pending = bufferedByteCount
            if pending > 0 { throw .truncated(expected: FrameLimits.headerSize, received: pending) }
        case .awaitingBody(let length):
            throw .truncated(expected: length, received: bufferedByteCount)
        }
    }

    /// Hands back every byte received and not yet returned as a frame, as the stream had them
    /// (an unfinished frame's header included), and starts over empty. A daemon handing its
    /// connection to its next process passes them on, so the next decoder continues the same
    /// stream. Empty after a fatal error (the stream cannot be followed anyway).
    public mutating func takeUnread() -> [UInt8] {
        var unread: [UInt8] = []
        switch state {
        case .failed:
            return []
        case .awaitingHeader:
            break
        case .awaitingBody(let length):
            unread = [UInt8(truncatingIfNeeded: length >> 24), UInt8(truncatingIfNeeded: length >> 16),
                      UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length)]
        }
        unread.append(contentsOf: buffer[readIndex...])
        state = .awaitingHeader
        buffer = []
        readIndex = 0
        return unread
    }

    /// Drops consumed bytes; amortised so a stream of small frames does not shift the buffer on
    /// every read.
    private mutating func compact() {
        if readIndex == 0 { return }
        if readIndex == buffer.count {
            // Small buffers are kept for the next read; one grown by a large frame is given back,
            // so a connection that once sent a megabyte does not hold it while idle.
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
            readIndex = 0
        } else if readIndex >= 4096 && readIndex * 2 >= buffer.count {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
    }
}
