import Foundation
import UserListWire
import UserListClient

/// Ctrl-C leaves the way closing the terminal does: without `bye`, so the daemon keeps the
/// session, and `userctl` in the same terminal (or with the same `--session`) comes back to its
/// screens and unsaved name. The draft typed in the last moments (not yet sent: edits go out at
/// most every 50 ms) is sent first, and the TUI waits for the daemon to have it.
extension TUI {
    struct Detaching {
        /// Whether there was an edit to keep, for the line printed after leaving.
        let keptDraft: Bool
        /// Past this, leave even if the daemon has not answered (it may be gone).
        let deadline: ContinuousClock.Instant

        /// Whether every edit has reached the daemon (or the wait is over).
        func isDone(_ tui: TUI) -> Bool {
            (!tui.draftUnsent && tui.draftsInFlight == 0) || ContinuousClock.now >= deadline
        }
    }

    /// Ctrl-C: sends the draft now; a second Ctrl-C leaves at once. Returns false to quit now.
    func startDetaching() -> Bool {
        if detaching != nil { return false }
        detaching = Detaching(keptDraft: hasUnsavedChanges, deadline: .now + .seconds(3))
        flushDraft()
        return !detaching!.isDone(self)
    }

    /// Hangs up without `bye` and says where the draft is (on stderr, after the screen is gone).
    func detach(_ detaching: Detaching) {
        client.detach()
        if detaching.keptDraft {
            Console.err("userctl: your unsaved changes are kept\(Self.keptFor(client.welcome?.sessionRetentionSeconds));"
                        + " run userctl again in this terminal (or with --session \(client.configuration.sessionKey))"
                        + " to come back to them")
        }
    }

    /// " for 5 minutes, until 17:42" from the daemon's retention, or nothing when it did not say.
    static func keptFor(_ seconds: Int?, now: Date = Date()) -> String {
        guard let seconds, seconds > 0 else { return "" }
        let span = seconds % 60 == 0
            ? "\(seconds / 60) minute\(seconds == 60 ? "" : "s")" : "\(seconds) second\(seconds == 1 ? "" : "s")"
        let format = DateFormatter()
        format.dateFormat = seconds < 120 ? "HH:mm:ss" : "HH:mm"
        return " for \(span), until \(format.string(from: now.addingTimeInterval(Double(seconds))))"
    }
}
