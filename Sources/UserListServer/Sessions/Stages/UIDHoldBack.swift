/// The uid's hold-back: when its uid has used its share of messages for this second, the
/// connection stops reading until the window ends, then carries on with the frames it already
/// read (nothing is dropped). This stage keeps whether the connection is held and for how long;
/// the handler pauses reading and sets the timer. Loop-owned (inside `LoopBound`), so plain.
struct UIDHoldBack {
    /// Frames wait in the decoder until `release`.
    private(set) var isHolding = false

    /// Holds the connection until the uid's window ends at `windowEnd`: how long to wait before
    /// `release`, or nil when it is held already (one timer at a time).
    mutating func hold(until windowEnd: Int64, now: Int64) -> Duration? {
        guard !isHolding else { return nil }
        isHolding = true
        return .nanoseconds(max(0, windowEnd - now))
    }

    /// The window ended: reading and routing go on.
    mutating func release() { isHolding = false }
}
