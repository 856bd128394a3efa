/// Typed shortcuts so callers frame messages without touching `JSONValue`.
extension FrameEncoder {
    public func encode(_ message: ServerMessage, into buffer: inout [UInt8]) throws(FrameError) {
        try encode(message.json, into: &buffer)
    }

    public func encode(_ message: ClientMessage, into buffer: inout [UInt8]) throws(FrameError) {
        try encode(message.json, into: &buffer)
    }

    public func encode(_ message: ServerMessage) throws(FrameError) -> [UInt8] { try encode(message.json) }
    public func encode(_ message: ClientMessage) throws(FrameError) -> [UInt8] { try encode(message.json) }
}
