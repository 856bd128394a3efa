import Glibc

/// Monotonic nanoseconds: every latency in the bench is a difference of two of these.
func monotonicNanos() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// A deadline `seconds` from now, for bounded waits.
func deadline(seconds: Double) -> UInt64 {
    monotonicNanos() + UInt64(seconds * 1e9)
}

/// Latency samples in nanoseconds, summarised by nearest-rank percentiles.
struct Samples: Sendable {
    private(set) var values: [UInt64] = []

    init() {}
    init(_ values: [UInt64]) { self.values = values }

    var count: Int { values.count }
    mutating func append(_ nanos: UInt64) { values.append(nanos) }
    mutating func append(contentsOf other: Samples) { values.append(contentsOf: other.values) }

    /// Nearest-rank percentile in nanoseconds (`p` in 0...100); 0 when empty.
    func percentile(_ p: Double) -> UInt64 {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank - 1, 0), sorted.count - 1)]
    }

    var p50: UInt64 { percentile(50) }
    var p99: UInt64 { percentile(99) }
    var median: UInt64 { percentile(50) }
}

/// "12.3 µs", "4.56 ms", "1.20 s".
func formatNanos(_ nanos: UInt64) -> String {
    let value = Double(nanos)
    if value < 1_000 { return "\(Int(value)) ns" }
    if value < 1_000_000 { return fixed(value / 1e3, value < 100_000 ? 1 : 0) + " µs" }
    if value < 1_000_000_000 { return fixed(value / 1e6, value < 100_000_000 ? 2 : 0) + " ms" }
    return fixed(value / 1e9, 2) + " s"
}

/// A number with `digits` decimals, without Foundation's String(format:).
func fixed(_ value: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    var text = "\(rounded)"
    if text.hasSuffix(".0") && digits == 0 { text.removeLast(2) }
    if let dot = text.firstIndex(of: ".") {
        let decimals = text.distance(from: dot, to: text.endIndex) - 1
        if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
    } else if digits > 0 {
        text += "." + String(repeating: "0", count: digits)
    }
    return text
}

/// "1,000"
func grouped(_ value: Int) -> String {
    let digits = Array(String(abs(value)))
    var out = ""
    for (index, digit) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
        out.append(digit)
    }
    return (value < 0 ? "-" : "") + out
}

func sleepMillis(_ millis: Double) {
    usleep(UInt32(max(0, millis * 1000)))
}
