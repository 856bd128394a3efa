import Foundation
import Testing
@testable import userctl

/// Ctrl-C with unsaved changes says how long the daemon keeps them, from the welcome's
/// `session_retention_seconds` (issue 46 item 7).
@Suite struct KeptDraftMessageTests {
    let noon = ISO8601DateFormatter().date(from: "2026-12-04T12:00:00Z")!

    @Test func minutesAndTheTimeTheyEnd() {
        let text = TUI.keptFor(300, now: noon)
        #expect(text.hasPrefix(" for 5 minutes, until "), "\(text)")
        let format = DateFormatter()
        format.dateFormat = "HH:mm"
        #expect(text.hasSuffix(format.string(from: noon.addingTimeInterval(300))), "local time: \(text)")
    }

    /// Coming back to a lost draft: "expired at" a time past, never at a time still to come (the
    /// daemon restarted with a shorter retention dropped it before the time Ctrl-C gave).
    @Test func aDraftLostBeforeItsTimeIsGoneNotExpiredInTheFuture() {
        let note = KeptDraftNote.Note(user: "Ada", fields: [(field: "name", text: "Ada B")],
                                      expires: noon.addingTimeInterval(300))
        #expect(note.message(now: noon).hasPrefix("Your unsaved changes to Ada are gone: the daemon no longer had them"))
        #expect(note.message(now: noon).hasSuffix(": name “Ada B”"))
        #expect(note.message(now: noon.addingTimeInterval(600)).contains("expired at "))
    }

    @Test func secondsForShortRetentions() {
        #expect(TUI.keptFor(3, now: noon).hasPrefix(" for 3 seconds, until "))
        #expect(TUI.keptFor(60, now: noon).hasPrefix(" for 1 minute, until "))
    }

    @Test func nothingFromADaemonThatDoesNotSay() {
        #expect(TUI.keptFor(nil) == "")
        #expect(TUI.keptFor(0) == "")
    }
}
