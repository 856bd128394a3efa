import Foundation
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
    /// `status` is for admins). `status` refuses a read-only session: then the pid is the
    /// socket's listener's (`SO_PEERCRED`), when that process is a userlistd.
    func askDaemonPID() {
        guard daemon.kind != .system else { return }
        let feed = self.feed
        let client = self.client
        client.enqueue(screen: "session", action: "status") { result in
            if case .success(let status) = result, let pid = status?["pid"]?.int64Value {
                feed.yield(.daemonPID(Int(pid)))
            } else if let pid = client.peerPID, TUI.isDaemon(pid) {
                feed.yield(.daemonPID(pid))
            }
        }
    }

    /// Whether process `pid` is a userlistd (its /proc comm), so that a listener that is not
    /// (systemd's socket activation) is never named as the daemon.
    static func isDaemon(_ pid: Int) -> Bool {
        guard let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) else { return false }
        return comm.trimmingCharacters(in: .whitespacesAndNewlines) == "userlistd"
    }
}
