/// Keeps a client's intents under the daemon's per-client limit (`intents-per-second`, which the
/// daemon announces in `welcome.limits`), so that a command paging through a large store never
/// trips the limit of its own daemon. Pacing by design, not retrying on `rate_limited`.
///
/// A generic cell rate algorithm: at most `burst` intents at once, then one every `interval`.
/// The daemon counts messages in fixed one-second windows as it reads them, and reading may lag
/// the writes (a busy loop, a paused uid): any window then holds the intents of a longer span of
/// writes. Sending at three quarters of the limit with a burst of a twentieth leaves room for
/// about 0.2 s of such lag (`burst + rate × 1.2 s ≤ limit`).
package struct IntentPacer: Sendable {
    /// The limit a daemon that announces none has by default.
    package static let defaultLimit = 200

    package let interval: Duration
    package let burst: Int
    /// When the next intent would be sent if every earlier one went at the steady rate.
    private var theoretical: ContinuousClock.Instant?

    package init(limit: Int) {
        let limit = max(1, limit)
        let rate = Double(limit) * 0.75
        interval = .nanoseconds(Int64((1e9 / rate).rounded(.up)))
        burst = max(1, limit / 20)
    }

    /// Books the next slot and returns how long to wait before sending in it (zero: now).
    package mutating func reserve(now: ContinuousClock.Instant) -> Duration {
        let due = max(theoretical ?? now, now)
        let earliest = due - interval * (burst - 1)
        theoretical = due + interval
        return earliest > now ? earliest - now : .zero
    }
}
