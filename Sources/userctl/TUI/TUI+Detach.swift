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
        /// What was unsaved, remembered in this terminal in case the session expires first.
        let note: KeptDraftNote.Note?
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
        detaching = Detaching(keptDraft: hasUnsavedChanges, note: hasUnsavedChanges ? unsavedNote() : nil,
                              deadline: .now + .seconds(3))
        flushDraft()
        return !detaching!.isDone(self)
    }

    /// Hangs up without `bye` and says where the draft is (on stderr, after the screen is gone).
    func detach(_ detaching: Detaching) {
        client.detach()
        if detaching.keptDraft {
            if let note = detaching.note { KeptDraftNote.save(note, sessionKey: client.configuration.sessionKey) }
            let keptFor = Self.keptFor(client.welcome?.sessionRetentionSeconds)
            Console.err("userctl: your unsaved changes are kept\(keptFor);"
                        + " run userctl again in this terminal (or with --session \(client.configuration.sessionKey))"
                        + " to come back to them")
        }
    }

    /// The unsaved fields of the open user (each that differs from the stored one), and when
    /// the daemon will drop them.
    func unsavedNote() -> KeptDraftNote.Note? {
        guard let detail = document.detail else { return nil }
        let fields = DetailField.allCases
            .filter { fieldText($0) != detail.stored($0) || (detail.isNew && !fieldText($0).isEmpty) }
            .map { (field: $0.label, text: fieldText($0)) }
        let user = detail.user?.name ?? "a new user"
        let seconds = client.welcome?.sessionRetentionSeconds ?? 300
        return KeptDraftNote.Note(user: user, fields: fields, expires: Date().addingTimeInterval(Double(seconds)))
    }

    /// Once connected: a note left by Ctrl-C in this terminal is dropped when the session came
    /// back (its draft is on screen), and said when it did not (the daemon let it expire).
    func reportExpiredDraft(_ welcome: ServerMessage.Welcome) {
        guard !checkedKeptDraft else { return }
        checkedKeptDraft = true
        guard let note = KeptDraftNote.take(client.configuration.sessionKey), !welcome.resumed else { return }
        banner = note.message()
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
