/// What a client may send, on its connection's loop: a fixed one-second window of messages per
/// client, and how many bytes of unfinished frames it has counted against its uid's budget (its
/// uid's shared message window is `UIDHoldBack`'s). Loop-owned (inside `LoopBound`), so plain.
struct Admission {
    private var window: (start: ContinuousClock.Instant, count: Int) = (.now, 0)
    /// Unfinished-frame bytes this connection has counted against its uid's budget.
    var countedPartialBytes = 0
    let messagesPerSecond: Int

    init(messagesPerSecond: Int) {
        self.messagesPerSecond = messagesPerSecond
    }

    /// Counts one message; false past the client's share for this second.
    mutating func admitMessage(now: ContinuousClock.Instant = .now) -> Bool {
        if now - window.start >= .seconds(1) { window = (now, 0) }
        window.count += 1
        return window.count <= messagesPerSecond
    }

    /// The change to report to the uid's partial-frame budget now that `buffered` bytes wait,
    /// or nil when nothing changed; counts it as reported.
    mutating func partialBytesDelta(buffered: Int) -> Int? {
        guard buffered != countedPartialBytes else { return nil }
        defer { countedPartialBytes = buffered }
        return buffered - countedPartialBytes
    }
}
