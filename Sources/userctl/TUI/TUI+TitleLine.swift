import UserListClient
import UserListWire

/// The title line of every screen: what the screen is on the left, the daemon it is on at the
/// right (`DaemonLabel`), so two terminals on two daemons are never confused (#48 item 5).
extension TUI {
    /// The title keeps what it needs and the daemon takes the rest of the line, as much of its
    /// wording as fits; the title is cut (with "…") only to leave the daemon its shortest one.
    func header(_ title: String) -> Line {
        let left = " userctl · " + title
        let gap = 2
        let free = size.columns - DisplayWidth.of(left) - gap - 1  // one column after the label
        let right = daemon.text(fitting: max(free, DisplayWidth.of(daemon.shortest)))
        let leftWidth = max(0, size.columns - DisplayWidth.of(right) - 1)
        let shown = DisplayWidth.of(left) <= leftWidth - gap ? left : DisplayWidth.truncate(left, to: leftWidth - gap)
        return Line(DisplayWidth.pad(shown, to: leftWidth) + right + " ", .boldReverse)
    }

    /// Asks the daemon its pid (`status`) for the title line, on every connection: a reconnect
    /// may reach a daemon started again. Not the system daemon's (its socket names it, and there
    /// `status` is for admins); a refusal (a read-only session) leaves the pid unsaid.
    func askDaemonPID() {
        guard daemon.kind != .system else { return }
        let feed = self.feed
        client.enqueue(screen: "session", action: "status") { result in
            guard case .success(let status) = result, let pid = status?["pid"]?.int64Value else { return }
            feed.yield(.daemonPID(Int(pid)))
        }
    }
}
