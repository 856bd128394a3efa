/// One way to write a length of time in every table (`status` uptime, `sessions` idle): the two
/// largest units, whole numbers, no decimals: "9s", "4m 05s", "2h 03m", "3d 04h".
enum DurationText {
    static func of(seconds: Double) -> String {
        let total = max(0, Int(seconds.rounded(.down)))
        let (days, hours, minutes, secs) = (total / 86_400, total / 3_600 % 24, total / 60 % 60, total % 60)
        if days > 0 { return "\(days)d \(two(hours))h" }
        if hours > 0 { return "\(hours)h \(two(minutes))m" }
        if minutes > 0 { return "\(minutes)m \(two(secs))s" }
        return "\(secs)s"
    }

    private static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
