/// Protocol version negotiation.
///
/// Policy: the daemon speaks the current version and the one before it, so clients can be
/// upgraded after the daemon without a flag day. The client offers a range in `hello`; the server
/// picks the highest version in both ranges, or refuses with `unsupported_version` naming both.
public enum ProtocolVersion {
    /// The version this build writes by default.
    public static let current = 1
    /// Versions this build accepts: `[current - 1, current]`, never below 1.
    public static let supported: ClosedRange<Int> = max(1, current - 1)...current

    /// Version numbers run from 1 to this (PROTOCOL.md §3), which keeps `min ≤ max` expressible
    /// in the hello schema.
    public static let highestNumber = 64

    /// The highest version in both ranges, or `nil` when they do not overlap.
    public static func negotiate(client: ClosedRange<Int>, server: ClosedRange<Int> = supported) -> Int? {
        let high = min(client.upperBound, server.upperBound)
        return high >= max(client.lowerBound, server.lowerBound) ? high : nil
    }

    /// The `unsupported_version` message, naming both sides' ranges so the person who sees it
    /// knows which side to upgrade.
    public static func mismatchMessage(client: ClosedRange<Int>, server: ClosedRange<Int> = supported) -> String {
        "no common protocol version: client supports \(client.lowerBound)-\(client.upperBound), "
            + "server supports \(server.lowerBound)-\(server.upperBound)"
    }
}
