import ThreadLocks

/// One-second counting windows per uid: how many of something (messages, new connections) each
/// uid did in its current second. Fairness between uids is built on these.
package final class PerUIDWindows: Sendable {
    private let windows = Lock<[UInt32: (start: Int64, count: Int)]>([:])

    package init() {}

    /// Counts one more for `uid` at `now` (monotonic nanoseconds); returns the window's start
    /// and its count including this one.
    package func charge(uid: UInt32, now: Int64) -> (start: Int64, count: Int) {
        windows.withLock { windows in
            var window = windows[uid] ?? (now, 0)
            if now - window.start >= 1_000_000_000 { window = (now, 0) }
            window.count += 1
            windows[uid] = window
            return window
        }
    }

    /// Forgets uids whose window started before `cutoff` (quiet ones), so the table stays small.
    package func forgetQuiet(before cutoff: Int64) {
        windows.withLock { windows in windows = windows.filter { $0.value.start >= cutoff } }
    }
}
