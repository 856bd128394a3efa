import Foundation
import Testing
import UserListTestSupport
import UserListWire
@testable import userctl

/// Issue 27 items 4 and 7, through tmux against a real daemon: on a small terminal the user
/// screen keeps what matters (the name, "modified", the unsaved-changes question, whole), a
/// long name scrolls with the cursor, and the list's `[stale]` is explained and goes away when
/// the list is read again by itself. Every wait is for a screen condition, never a fixed time.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)), .disabled(if: TUIHarness.skipReason != nil, "needs tmux and a built userlistd/userctl (see the printed reason)"))
struct TUISmallScreenProcessTests {
    typealias H = TUIHarness

    /// Opens the first user's screen and types " X" after the name.
    func openAndEdit(_ h: H) async throws -> (id: String, name: String, email: String) {
        let user = try h.allUsers()[0]
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        try h.keys("Enter")
        let lines = try await h.waitFor { $0.contains { $0.hasPrefix("  Name:") && $0.hasSuffix("▏") } }
        try #require(lines.contains { $0.hasPrefix("  Name:") && $0.hasSuffix("▏") }, "detail open: \(lines)")
        try h.type(" X")
        return user
    }

    /// The question's words, wherever the lines break.
    static func showsTheWholeQuestion(_ lines: [String]) -> Bool {
        let text = lines.joined(separator: " ")
        return ["Unsaved changes.", "s save and go back", "d discard them", "k or Esc keep editing"].allSatisfy(text.contains)
            && !lines.contains { $0.contains("Unsaved") && $0.hasSuffix("…") }
    }

    @Test(arguments: [(40, 10), (40, 14), (30, 8)])
    func theUnsavedQuestionAndModifiedShowOnASmallTerminal(columns: Int, rows: Int) async throws {
        let h = try H(columns: columns, rows: rows)
        defer { h.tearDown() }
        let user = try await openAndEdit(h)
        var lines = try await h.waitFor { $0.contains { $0.contains("modified") } }
        #expect(lines.contains { $0.contains("modified") }, "\(columns)x\(rows): 'modified' shows: \(lines)")
        #expect(lines.contains { $0.contains("Name:") && $0.contains("X▏") }, "the name being typed shows: \(lines)")

        try h.keys("Escape")
        lines = try await h.waitFor { Self.showsTheWholeQuestion($0) }
        #expect(Self.showsTheWholeQuestion(lines), "\(columns)x\(rows): the whole question shows: \(lines)")
        #expect(lines.count == rows && lines.allSatisfy { DisplayWidth.of($0) <= columns }, "\(lines)")
        // The next key answers the question it can see: k keeps editing, nothing is swallowed.
        try h.keys("k")
        lines = try await h.waitFor { !$0.joined().contains("Unsaved changes") }
        try h.type("Y")
        lines = try await h.waitFor { $0.contains { $0.contains("XY▏") } }
        #expect(lines.contains { $0.contains("XY▏") }, "kept editing, the next key typed: \(lines)")
        try h.keys("Escape")
        _ = try await h.waitFor { Self.showsTheWholeQuestion($0) }
        try h.keys("d")
        lines = try await h.waitFor { $0[0].contains("· Users ") }
        #expect(lines[0].contains("· Users "), "d discarded, back on the list: \(lines)")
        let stored = try JSONValue(parsing: h.userctl(["show", user.id, "--json"]).output)
        #expect(stored["name"]?.stringValue == user.name)
    }

    /// A name longer than the field: its end and the cursor show, after "…" (the start used
    /// to show, cut, with the cursor off screen).
    @Test func aLongNameScrollsWithTheCursor() async throws {
        let h = try H(columns: 100, rows: 30)
        defer { h.tearDown() }
        _ = try await openAndEdit(h)
        try h.keys("C-u")
        let name = (1...15).map { "Word\($0)" }.joined(separator: " ") + " and the end"  // 125 characters
        try h.type(name)
        let lines = try await h.waitFor { $0.contains { $0.hasSuffix("and the end▏") } }
        let field = try #require(lines.first { $0.contains("Name:") }, "\(lines)")
        #expect(field.hasSuffix("and the end▏"), "the end of what is typed, and the cursor: \(field)")
        #expect(field.hasPrefix("  Name:     …"), "the start scrolled out: \(field)")
        #expect(DisplayWidth.of(field) <= 100)
    }

    /// `[stale]` is explained in the status line, and reading the list again by itself clears it:
    /// `g` reads a stale list again, and so does coming back from a user's screen.
    @Test func staleIsExplainedAndClearedWhenTheListIsReadAgain() async throws {
        let h = try H(columns: 120, rows: 30)
        defer { h.tearDown() }
        let users = try h.allUsers()
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        #expect(try h.userctl(["rename", users[3].id, "Zz Renamed Elsewhere"]).status == 0)
        var lines = try await h.waitFor { $0[0].contains("[stale]") && $0[h.rows - 1].contains("[stale]: users changed elsewhere") }
        #expect(lines[0].contains("[stale]"), "\(lines[0])")
        #expect(lines[h.rows - 1].contains("[stale]: users changed elsewhere; rows not loaded yet may have moved (r reloads)"),
                "the status line says what it means: \(lines[h.rows - 1])")
        try h.keys("g")
        lines = try await h.waitFor { !$0[0].contains("[stale]") && H.shows($0, loaded: 50, of: 200) }
        #expect(!lines[0].contains("[stale]") && !lines[h.rows - 1].contains("[stale]"), "g read the list again: \(lines[0])")

        // On a user's screen while someone else renames that user (the screen shows it, so the
        // change has reached the session, and its list is stale); back on the list.
        try h.keys("j", "Enter")
        _ = try await h.waitFor { $0.contains { $0.contains("ID:       \(users[1].id)") } }
        let renamed = users[1].name + " Too"
        #expect(try h.userctl(["rename", users[1].id, renamed]).status == 0)
        lines = try await h.waitFor { $0[0].contains("User: \(renamed)") }
        try #require(lines[0].contains("User: \(renamed)"), "the change arrived: \(lines[0])")
        try h.keys("Escape")
        lines = try await h.waitFor { H.shows($0, loaded: 50, of: 200) && !$0[0].contains("[stale]") && H.cursorRow($0) != nil }
        #expect(!lines[0].contains("[stale]"), "coming back read the list again: \(lines[0])")
        let cursor = try #require(H.cursorRow(lines))
        #expect(lines[cursor].contains(users[1].email), "the cursor is still on the user it opened: \(lines)")
    }

    /// Issue 48 item 8d: a list whose every row is loaded is never `[stale]` (its rows follow
    /// the changes): a 1-of-1 search result after someone renamed another user.
    @Test func aWhollyLoadedListIsNeverStale() async throws {
        let h = try H(columns: 120, rows: 30)
        defer { h.tearDown() }
        let users = try h.allUsers()
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        try h.keys("/")
        try h.type(users[5].email)
        try h.keys("Enter")
        var lines = try await h.waitFor { H.shows($0, place: 1, of: 1) && H.cursorRow($0) == 2 && $0[2].contains(users[5].email) }
        try #require(H.shows(lines, place: 1, of: 1), "one result: \(lines[0])")
        // An unrelated rename, then one of the row on screen: once the row shows the second,
        // the session has had both.
        #expect(try h.userctl(["rename", users[7].id, users[7].name + " Elsewhere"]).status == 0)
        #expect(try h.userctl(["rename", users[5].id, users[5].name + " Here"]).status == 0)
        lines = try await h.waitFor { $0[2].contains(users[5].name + " Here") }
        try #require(lines[2].contains(users[5].name + " Here"), "the changes arrived: \(lines)")
        #expect(!lines[0].contains("[stale]") && !lines[h.rows - 1].contains("[stale]"), "every row loaded and current: \(lines)")
    }
}
