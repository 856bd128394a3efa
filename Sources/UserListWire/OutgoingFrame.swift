/// A frame ready to write, as bytes of its own around bytes it shares with other frames.
///
/// A change that reaches a thousand clients gives each the same patch operations inside its
/// own envelope (epoch, sequence number). Kept as pieces, the operations are one buffer that
/// every client's frame refers to and the socket gathers them with `writev`, instead of each
/// client's frame being a fresh copy of them.
public struct OutgoingFrame: Sendable {
    /// This frame's own bytes: those before `shared`, then (from `sharedAt`) those after it.
    public let own: [UInt8]
    /// Where `shared` goes in `own`.
    public let sharedAt: Int
    /// Bytes other frames hold too (empty for a frame written whole).
    public let shared: [UInt8]

    /// A frame in one piece (length prefix included).
    public init(_ bytes: [UInt8]) {
        own = bytes
        sharedAt = bytes.count
        shared = []
    }

    init(own: [UInt8], sharedAt: Int, shared: [UInt8]) {
        self.own = own
        self.sharedAt = sharedAt
        self.shared = shared
    }

    /// The frame's length on the wire, prefix included.
    public var count: Int { own.count + shared.count }

    /// The frame as one array: for whoever needs it whole (a hand-over, a test).
    public var bytes: [UInt8] {
        guard !shared.isEmpty else { return own }
        var whole = [UInt8]()
        whole.reserveCapacity(count)
        whole.append(contentsOf: own[..<sharedAt])
        whole.append(contentsOf: shared)
        whole.append(contentsOf: own[sharedAt...])
        return whole
    }

    /// Calls `body` with each non-empty piece in wire order, leaving out the first `skipping`
    /// bytes (those already written). The pointers are valid as long as this frame is alive.
    public func forEachPiece(skipping skip: Int, _ body: (UnsafeRawPointer, Int) -> Void) {
        var skip = skip
        func visit(_ piece: UnsafeRawBufferPointer) {
            guard piece.count > skip, let base = piece.baseAddress else {
                skip = max(0, skip - piece.count)
                return
            }
            body(base + skip, piece.count - skip)
            skip = 0
        }
        own.withUnsafeBytes { own in
            visit(UnsafeRawBufferPointer(rebasing: own[..<sharedAt]))
            shared.withUnsafeBytes { visit($0) }
            visit(UnsafeRawBufferPointer(rebasing: own[sharedAt...]))
        }
    }
}
