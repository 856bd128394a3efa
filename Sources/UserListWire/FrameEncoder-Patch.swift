/// The hot path of a server: one patch, sent to every client of a session after every change.
/// Its operations are serialized once (`serializedOperations`) and each client's frame is the
/// same bytes with its own epoch and sequence number around them, instead of building and
/// serializing a `ServerMessage` per client. The bytes are exactly what `encode(.patch(...))`
/// writes (keys sorted), which the tests check.
extension FrameEncoder {
    /// `[op, op, ...]` as JSON, in RFC 6902 object form with sorted keys.
    public static func serializedOperations(_ operations: [PatchOperation]) -> [UInt8] {
        var writer = PatchOperationsWriter(reservingCapacity: 64 * operations.count + 2)
        for operation in operations { writer.append(operation) }
        return writer.finished()
    }

    /// One `patch` frame around operations serialized by `serializedOperations`, as one array.
    public func encodePatch(epoch: Int, seq: Int,
                            serializedOperations operations: [UInt8]) throws(FrameError) -> [UInt8] {
        try patchFrame(epoch: epoch, seq: seq, serializedOperations: operations).bytes
    }

    /// One `patch` frame around operations serialized by `serializedOperations`, which it shares
    /// rather than copies: only the envelope (length, epoch, seq) is this frame's own.
    public func patchFrame(epoch: Int, seq: Int,
                           serializedOperations operations: [UInt8]) throws(FrameError) -> OutgoingFrame {
        var own: [UInt8] = [0, 0, 0, 0]
        own.reserveCapacity(64)
        own.append(contentsOf: #"{"epoch":"#.utf8)
        JSONWriter.writeInt(Int64(epoch), into: &own)
        own.append(contentsOf: #","ops":"#.utf8)
        let sharedAt = own.count
        own.append(contentsOf: #","seq":"#.utf8)
        JSONWriter.writeInt(Int64(seq), into: &own)
        own.append(contentsOf: #","type":"patch"}"#.utf8)
        return try sharing(operations, at: sharedAt, in: own)
    }

    /// A frame of its own envelope `own` (a 4-byte length to fill in, then the JSON around the
    /// hole at `sharedAt`) and the `shared` bytes that go in the hole, not copied. `own` is
    /// consumed: the length goes into the caller's buffer rather than into a copy of it.
    func sharing(_ shared: [UInt8], at sharedAt: Int, in own: consuming [UInt8]) throws(FrameError) -> OutgoingFrame {
        var own = own
        let length = own.count + shared.count - FrameLimits.headerSize
        guard length <= maximumFrameSize else {
            throw FrameError.frameTooLarge(length: UInt32(clamping: length), limit: maximumFrameSize)
        }
        own[0] = UInt8(truncatingIfNeeded: length >> 24)
        own[1] = UInt8(truncatingIfNeeded: length >> 16)
        own[2] = UInt8(truncatingIfNeeded: length >> 8)
        own[3] = UInt8(truncatingIfNeeded: length)
        return OutgoingFrame(own: own, sharedAt: sharedAt, shared: shared)
    }
}

/// Patch operations written into their JSON array one at a time, in the bytes
/// `FrameEncoder.serializedOperations` gives the same operations: for a producer that would
/// otherwise build the operations only to serialize them (a page's fifty rows).
public struct PatchOperationsWriter {
    private var out: [UInt8]
    /// How many operations were written.
    public private(set) var count = 0

    public init(reservingCapacity capacity: Int = 256) {
        out = []
        out.reserveCapacity(capacity)
        out.append(UInt8(ascii: "["))
    }

    public var isEmpty: Bool { count == 0 }

    public mutating func append(_ operation: PatchOperation) {
        switch operation {
        case .move(let from, _), .copy(let from, _): open(operation.name, from: from)
        default: open(operation.name, from: nil)
        }
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

    /// An `add` of element `index` of the array at `array`, its value written by `writeValue`
    /// (which must write one JSON value, as `JSONValue.serialize` would).
    public mutating func appendAdd(at array: JSONPointer, index: Int, value writeValue: (inout [UInt8]) -> Void) {
        open("add", from: nil)
        JSONWriter.writePointer(array, appendingIndex: index, into: &out)
        out.append(contentsOf: #","value":"#.utf8)
        writeValue(&out)
        out.append(UInt8(ascii: "}"))
    }

    /// The array, closed.
    public consuming func finished() -> [UInt8] {
        out.append(UInt8(ascii: "]"))
        return out
    }

    /// Starts an operation object up to its path, keys in sorted order: from, op, path (then
    /// value).
    private mutating func open(_ name: String, from: JSONPointer?) {
        if count > 0 { out.append(UInt8(ascii: ",")) }
        count += 1
        out.append(UInt8(ascii: "{"))
        if let from {
            out.append(contentsOf: #""from":"#.utf8)
            JSONWriter.writePointer(from, into: &out)
            out.append(UInt8(ascii: ","))
        }
        out.append(contentsOf: #""op":"#.utf8)
        JSONWriter.writeString(name, into: &out)
        out.append(contentsOf: #","path":"#.utf8)
    }
}
