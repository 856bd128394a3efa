/// Builds frames: a 4-byte big-endian byte count, then the UTF-8 JSON body.
///
/// The JSON is serialized straight into the output buffer behind a reserved header, so a frame
/// costs one allocation and no copy of the body. A value over the limit is refused here rather
/// than sent, because the peer would have to drop the whole connection on receiving it.
public struct FrameEncoder: Sendable {
    public let maximumFrameSize: Int

    /// - Parameter maximumFrameSize: largest body in bytes; the server uses
    ///   `FrameLimits.serverToClient`, a client `FrameLimits.clientToServer`.
    public init(maximumFrameSize: Int) {
        precondition(maximumFrameSize > 0 && maximumFrameSize <= Int(UInt32.max))
        self.maximumFrameSize = maximumFrameSize
    }

    /// Appends one frame holding `value` to `buffer`, so many frames can be batched into a single
    /// `write` (PERF-NOTES.md: one write per tick per socket). On error `buffer` is unchanged.
    public func encode(_ value: JSONValue, into buffer: inout [UInt8]) throws(FrameError) {
        let headerStart = buffer.count
        buffer.append(contentsOf: [0, 0, 0, 0])
        value.serialize(into: &buffer)
        let length = buffer.count - headerStart - FrameLimits.headerSize
        guard length <= maximumFrameSize else {
            buffer.removeSubrange(headerStart...)
            throw FrameError.frameTooLarge(length: UInt32(clamping: length), limit: maximumFrameSize)
        }
        buffer[headerStart] = UInt8(truncatingIfNeeded: length >> 24)
        buffer[headerStart + 1] = UInt8(truncatingIfNeeded: length >> 16)
        buffer[headerStart + 2] = UInt8(truncatingIfNeeded: length >> 8)
        buffer[headerStart + 3] = UInt8(truncatingIfNeeded: length)
    }

    /// One frame holding `value`.
    public func encode(_ value: JSONValue) throws(FrameError) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(256)
        try encode(value, into: &buffer)
        return buffer
    }
}
