import Foundation
import Testing
import UserListTestSupport
import UserListWire

/// Issue 27 items 1 and 8, through tmux against a real daemon: Ctrl-C never loses an unsaved
/// name, and a save that re-sorts the user keeps the cursor on that user. Every wait is for a
/// screen condition, never a fixed time.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)), .disabled(if: TUIHarness.skipReason != nil, "needs tmux and a built userlistd/userctl (see the printed reason)"))
struct TUIKeepsWorkProcessTests {
    typealias H = TUIHarness
    static let prompt = "ULCT$"

    /// From the pane's shell: the TUI on the first user's screen, `text` typed into the name
    /// (`waitingForTheScreen`: until the screen shows it; else Ctrl-C at once, before the draft's
    /// flush), then Ctrl-C back to the prompt. The user, and the screen at the prompt.
    func typeIntoFirstUserAndQuit(_ h: H, _ text: String, waitingForTheScreen: Bool) async throws
        -> (user: (id: String, name: String, email: String), lines: [String]) {
        _ = try await h.waitFor { $0.first?.hasPrefix(Self.prompt) == true }
        let user = try h.allUsers()[0]
        try await startTUI(h)
        _ = try await h.waitFor { $0[0].contains("· Users ") && H.cursorRow($0) == 2 }
        try h.keys("Enter")
        _ = try await h.waitFor { $0.contains { $0.contains("ID:       \(user.id)") } }
        try h.type(text)
        if waitingForTheScreen {
            _ = try await h.waitFor { $0.contains { $0.contains("Name:     \(user.name)\(text)▏") } }
        }
        try h.keys("C-c")
        let lines = try await h.waitFor { $0.contains("EXIT-0") && $0.last { !$0.isEmpty } == Self.prompt }
        return (user, lines)
    }

    /// Starts the TUI from the pane's shell and waits until it is connected.
    func startTUI(_ h: H) async throws {
        try h.type("clear; " + h.tuiCommand + "; echo EXIT-$?")
        try h.keys("Enter")
        let lines = try await h.waitFor { $0[0].contains("userctl · ") && $0.last?.contains("● connected") == true }
        try #require(lines[0].contains("userctl · "), "the TUI is up: \(lines)")
    }

    /// Type a name, press Ctrl-C at once (before the 50 ms draft flush), run userctl again in
    /// the same pane: the user's screen comes back with the whole draft, still unsaved. The
    /// store never saw it.
    @Test func ctrlCKeepsTheDraftForTheNextRunInTheSamePane() async throws {
        let h = try H(columns: 100, rows: 30, command: "env PS1='\(Self.prompt) ' /bin/sh")
        defer { h.tearDown() }
        var (user, lines) = try await typeIntoFirstUserAndQuit(h, " Kept", waitingForTheScreen: false)
        #expect(lines.contains("EXIT-0"), "Ctrl-C quit: \(lines)")
        #expect(lines.contains { $0.contains("your unsaved changes are kept") }, "it says where the draft is: \(lines)")

        try await startTUI(h)
        lines = try await h.waitFor { $0.contains { $0.contains("Name:     \(user.name) Kept▏") } && $0.contains { $0.contains("modified") } }
        #expect(lines.contains { $0.contains("Name:     \(user.name) Kept▏") }, "the draft is back: \(lines)")
        #expect(lines.contains { $0.contains("modified: Enter or Ctrl-S saves") }, "still unsaved: \(lines)")
        let stored = try JSONValue(parsing: h.userctl(["show", user.id, "--json"]).output)
        #expect(stored["name"]?.stringValue == user.name, "nothing was saved behind the user's back")

        // q on the list still ends the session (there is nothing unsaved there).
        try h.keys("C-s")
        _ = try await h.waitFor { $0.contains { $0.contains("Version:  2") } }
        try h.keys("Escape")
        _ = try await h.waitFor { $0[0].contains("· Users ") }
        try h.keys("q")
        lines = try await h.waitFor { $0.contains("EXIT-0") && $0.last { !$0.isEmpty } == Self.prompt }
        #expect(!lines.contains { $0.contains("your unsaved changes are kept") }, "nothing to keep: \(lines)")
    }

    /// Issue 46 item 7: Ctrl-C with unsaved changes, then the daemon lets the session expire
    /// (`--retention 1`): userctl in the same terminal says what was lost, and when.
    @Test func comingBackAfterTheKeptDraftExpiredSaysWhatWasLost() async throws {
        let h = try H(columns: 160, rows: 30, command: "env PS1='\(Self.prompt) ' /bin/sh", daemonArguments: ["--retention", "1"])
        defer { h.tearDown() }
        var (user, lines) = try await typeIntoFirstUserAndQuit(h, " Gone", waitingForTheScreen: true)
        try #require(lines.contains { $0.contains("your unsaved changes are kept") }, "Ctrl-C kept the draft: \(lines)")
        // The daemon drops the detached session once its second of retention is over.
        let key = h.server
        let dropped = await eventually {
            guard let run = try? h.userctl(["sessions", "--json"]), run.status == 0 else { return false }
            return run.output.contains("\"") && !run.output.contains(key)
        }
        try #require(dropped, "the daemon dropped the session: \((try? h.userctl(["sessions", "--json"]).output) ?? "")")

        try await startTUI(h)
        let said = "Your unsaved changes to \(user.name) expired at "
        lines = try await h.waitFor { $0[1].contains(said) }
        #expect(lines[1].contains(said), "it says what was lost: \(lines)")
        #expect(lines[1].contains("name “\(user.name) Gone”"), "and what it was: \(lines[1])")
    }

    /// A user near the top, renamed so that they sort twenty rows further down: back on the
    /// list the cursor is on that user, not on whoever took their old place (nor on the top row).
    @Test func afterSavingANameThatResortsTheCursorStaysOnTheUser() async throws {
        let h = try H()
        defer { h.tearDown() }
        let users = try h.allUsers()
        let target = users[2]
        let newName = users[22].name + " Zz"  // sorts twenty rows further down
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        try h.keys("j", "j")
        var lines = try await h.waitFor { $0.contains { $0.hasPrefix("▸ ") && $0.contains(target.email) } }
        try #require(lines.contains { $0.hasPrefix("▸ ") && $0.contains(target.email) }, "on user 2: \(lines)")
        try await Self.openRenameAndLeave(h, target.id, to: newName)
        lines = try await h.waitFor { $0[0].contains("· Users ") && $0.contains { $0.contains(newName) } && H.cursorRow($0) != nil }
        let cursor = try #require(H.cursorRow(lines), "a cursor: \(lines)")
        #expect(lines[cursor].contains(newName) && lines[cursor].contains(target.email),
                "the cursor is on the renamed user: \(lines)")
        #expect(cursor > 4, "moved down with the user, not left on its old row: \(lines)")
    }

    /// Back on the list, the cursor is on the user just left even when their row is not among
    /// the loaded ones (300 users, 50 loaded): a name saved to sort last, and a user added
    /// with `a` whose name sorts last too.
    @Test func backFromAUserWhoseRowIsNotLoadedTheCursorIsOnThem() async throws {
        let h = try H(sampleData: 300)
        defer { h.tearDown() }
        let users = try h.allUsers()
        let target = users[0]
        let newName = users[299].name + " Zz"  // sorts last, far past the loaded rows
        _ = try await h.waitFor { H.cursorRow($0) == 2 && H.shows($0, loaded: 50, of: 300) }
        try await Self.openRenameAndLeave(h, target.id, to: newName)
        var lines = try await h.waitFor { H.shows($0, place: 300, of: 300) && H.cursorRow($0) != nil }
        #expect(H.shows(lines, place: 300, of: 300), "the cursor is at the renamed user's place: \(lines[0])")
        var cursor = try #require(H.cursorRow(lines), "a cursor: \(lines)")
        #expect(lines[cursor].contains(newName) && lines[cursor].contains(target.email), "on the user: \(lines)")

        try h.keys("g")
        _ = try await h.waitFor { H.shows($0, place: 1, of: 300) }
        let added = newName + "z"  // after the renamed user: last of 301
        try h.keys("a")
        _ = try await h.waitFor { $0[0].contains("New user") }
        try h.type(added)
        try h.keys("Tab")
        try h.type("added.last@example.org")
        _ = try await h.waitFor { $0.contains { $0.contains("modified: Enter or Ctrl-S saves") } }
        try h.keys("Enter")
        _ = try await h.waitFor { $0.contains { $0.contains("Version:  1") } }
        try h.keys("Escape")
        lines = try await h.waitFor { H.shows($0, place: 301, of: 301) && H.cursorRow($0) != nil }
        #expect(H.shows(lines, place: 301, of: 301), "the cursor is at the added user's place: \(lines[0])")
        cursor = try #require(H.cursorRow(lines), "a cursor: \(lines)")
        #expect(lines[cursor].contains("added.last@example.org"), "on the added user: \(lines)")
    }

    /// A user saved to the far end of a long list is not looked for through every page in
    /// between (each read page is kept on the list): after a few pages the TUI says how to get
    /// there instead.
    @Test func backFromAUserSavedFarDownALongListSaysHowToGetThere() async throws {
        let h = try H(sampleData: 800)
        defer { h.tearDown() }
        let users = try h.allUsers()
        let newName = (users.map(\.name).max() ?? "") + " Zz"
        _ = try await h.waitFor { H.cursorRow($0) == 2 && H.shows($0, loaded: 50, of: 800) }
        try await Self.openRenameAndLeave(h, users[0].id, to: newName)
        let lines = try await h.waitFor { $0.contains { $0.contains("sorts further down the list") } }
        #expect(lines.contains { $0.contains("/ and part of the name finds them") }, "\(lines)")
        #expect(!H.shows(lines, loaded: 800, of: 800), "not every page read: \(lines[0])")
    }

    /// Opens the user under the cursor (`id`), renames it to `name`, saves, and goes back to the list.
    static func openRenameAndLeave(_ h: H, _ id: String, to name: String) async throws {
        try h.keys("Enter")
        _ = try await h.waitFor { $0.contains { $0.contains("ID:       \(id)") } }
        try h.keys("C-u")
        try h.type(name)
        _ = try await h.waitFor { $0.contains { $0.contains("Name:     \(name)▏") } }
        try h.keys("C-s")
        _ = try await h.waitFor { $0.contains { $0.contains("Version:  2") } }
        try h.keys("Escape")
    }
}
