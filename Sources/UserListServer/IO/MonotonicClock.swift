import Glibc

/// CLOCK_MONOTONIC in nanoseconds: a plain integer, so it fits an `Atomic` on the read path.
enum MonotonicClock {
    static func nanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}
