import UserListWire

/// The decoding stage: bytes in, client messages out, each failure as the error to answer.
/// Loop-owned, like the rest of the read path.
struct InboundDecoder {
    enum Decoded {
        case message(ClientMessage)
        /// The framing broke (fatal: the stream cannot be followed) or a frame was refused.
        case badFrame(FrameError)
        /// A whole frame that is not a valid message: answered, and reading goes on.
        case badMessage(MessageError)
    }

    private var frames: FrameDecoder

    init(maximumFrameSize: Int) {
        frames = FrameDecoder(maximumFrameSize: maximumFrameSize)
    }

    mutating func feed(_ bytes: UnsafeRawBufferPointer) { frames.feed(bytes) }

    /// The next complete message, or nil until more bytes come.
    mutating func next() -> Decoded? {
        let frame: [UInt8]
        do throws(FrameError) {
            guard let next = try frames.nextFrame() else { return nil }
            frame = next
        } catch {
            return .badFrame(error)
        }
        do throws(MessageError) {
            return .message(try ClientMessage(frame: frame))
        } catch {
            return .badMessage(error)
        }
    }

    var bufferedByteCount: Int { frames.bufferedByteCount }

    /// What was read and not yet decoded, as the stream had it (see `FrameDecoder.takeUnread`).
    mutating func takeUnread() -> [UInt8] { frames.takeUnread() }

    /// Frees an unfinished frame's buffer (the connection closed).
    mutating func discard() { frames = FrameDecoder(maximumFrameSize: 1) }
}
