/// A successful `reply` whose result is already JSON: `export_page`'s page of up to 10,000 users,
/// written straight into bytes, instead of a `JSONValue` object per user built, key-sorted and
/// serialized (half of the daemon's CPU in an export). The bytes are exactly what
/// `encode(.reply(.success(id:result:)))` writes for the same result (keys sorted), which the
/// tests check; the result is shared, not copied, as `patchFrame` does with its operations.
extension FrameEncoder {
    public func replyFrame(id: Int, serializedResult result: [UInt8]) throws(FrameError) -> OutgoingFrame {
        var own: [UInt8] = [0, 0, 0, 0]
        own.reserveCapacity(64)
        own.append(contentsOf: #"{"id":"#.utf8)
        JSONWriter.writeInt(Int64(id), into: &own)
        own.append(contentsOf: #","ok":true,"result":"#.utf8)
        let sharedAt = own.count
        own.append(contentsOf: #","type":"reply"}"#.utf8)
        return try sharing(result, at: sharedAt, in: own)
    }
}
