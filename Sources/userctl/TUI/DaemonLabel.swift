/// Which daemon the screens are on, as every title line names it (#48 item 5), so that two
/// terminals on two daemons (two directories of users) are never confused: the system's, this
/// user's private one (the one userctl starts) or one named by --socket or $USERLISTD_SOCKET,
/// with its pid (once the daemon said it) and its socket.
struct DaemonLabel: Equatable {
    var kind: DaemonLocator.Kind
    var socket: String
    /// From the daemon's `status`; nil until it answered, and for the system daemon (its socket
    /// names it, and there `status` is for admins).
    var pid: Int?

    /// The fewest columns a path's end is shown in ("…" and then this much of it); less room,
    /// and the path is left out.
    static let shortestPathEnd = 8

    /// The longest wording that fits `width` columns: the whole socket path, then its end after
    /// "…" (the end names the directory), then without the path, then shorter words; never
    /// shorter than `shortest`, which the title line always makes room for.
    func text(fitting width: Int) -> String {
        let path = DisplayWidth.sanitized(socket)
        if kind == .system {
            return Self.first(fitting: width, of: ["system daemon, " + path, "system daemon"]) ?? shortest
        }
        let who = (kind == .perUser ? "private daemon" : "daemon") + (pid.map { " pid \($0)" } ?? "")
        let whole = who + ", " + path
        if DisplayWidth.of(whole) <= width { return whole }
        let room = width - DisplayWidth.of(who + ", …")
        if room >= Self.shortestPathEnd { return who + ", …" + Self.end(of: path, width: room) }
        let brief = pid.map { (kind == .perUser ? "private pid " : "pid ") + String($0) }
        return Self.first(fitting: width, of: [who] + (brief.map { [$0] } ?? [])) ?? shortest
    }

    /// The shortest wording: the pid alone when known ("pid 1234"), else the kind in a word.
    var shortest: String {
        if kind == .system { return "system" }
        if let pid { return "pid \(pid)" }
        return kind == .perUser ? "private" : "daemon"
    }

    private static func first(fitting width: Int, of candidates: [String]) -> String? {
        candidates.first { DisplayWidth.of($0) <= width }
    }

    /// The last characters of `text` that fit `width` columns.
    private static func end(of text: String, width: Int) -> String {
        var end = ""
        for character in text.reversed() {
            if DisplayWidth.of(String(character) + end) > width { break }
            end = String(character) + end
        }
        return end
    }
}
