/// The hot path of a server: one patch, sent to every client of a session after every change.
/// Its operations are serialized once (`serializedOperations`) and each client's frame is the
/// same bytes with its own epoch and sequence number around them, instead of building and
/// serializing a `ServerMessage` per client. The bytes are exactly what `encode(.patch(...))`
/// writes (keys sorted), which the tests check.
extension FrameEncoder {
    /// `[op, op, ...]` as JSON, in RFC 6902 object form with sorted keys.
    public static func serializedOperations(_ operations: [PatchOperation]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 * operations.count + 2)
        out.append(UInt8(ascii: "["))
        for (index, operation) in operations.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "{"))
            switch operation {
            case .move(let from, _), .copy(let from, _):
                out.append(contentsOf: #""from":"#.utf8)
                JSONWriter.writePointer(from, into: &out)
                out.append(UInt8(ascii: ","))
            default:
                break
            }
            out.append(contentsOf: #""op":"#.utf8)
            JSONWriter.writeString(operation.name, into: &out)
            out.append(contentsOf: #","path":"#.utf8)
            JSONWriter.writePointer(operation.path, into: &out)
            switch operation {
            case .add(_, let value), .replace(_, let value), .test(_, let value):
                out.append(contentsOf: #","value":"#.utf8)
                value.serialize(into: &out)
            default:
                break
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
        return out
    }

    /// One `patch` frame around operations serialized by `serializedOperations`.
    public func encodePatch(epoch: Int, seq: Int, serializedOperations operations: [UInt8]) throws(FrameError) -> [UInt8] {
        var out: [UInt8] = [0, 0, 0, 0]
        out.reserveCapacity(operations.count + 64)
        out.append(contentsOf: #"{"epoch":"#.utf8)
        JSONWriter.writeInt(Int64(epoch), into: &out)
        out.append(contentsOf: #","ops":"#.utf8)
        out.append(contentsOf: operations)
        out.append(contentsOf: #","seq":"#.utf8)
        JSONWriter.writeInt(Int64(seq), into: &out)
        out.append(contentsOf: #","type":"patch"}"#.utf8)
        let length = out.count - FrameLimits.headerSize
        guard length <= maximumFrameSize else {
            throw FrameError.frameTooLarge(length: UInt32(clamping: length), limit: maximumFrameSize)
        }
        out[0] = UInt8(truncatingIfNeeded: length >> 24)
        out[1] = UInt8(truncatingIfNeeded: length >> 16)
        out[2] = UInt8(truncatingIfNeeded: length >> 8)
        out[3] = UInt8(truncatingIfNeeded: length)
        return out
    }
}
