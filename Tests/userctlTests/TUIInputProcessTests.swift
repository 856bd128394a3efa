import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire
@testable import userctl

/// The interactive screen's input and discoverability (issue 14), through tmux against a real
/// daemon: pastes arrive whole, leaving with unsaved changes asks first, `?` explains the keys,
/// search matches are highlighted, `G` reaches the true end, PgDn a full screen, the wheel
/// scrolls. Every wait is for a screen condition, never a fixed time.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(2)), .disabled(if: TUIHarness.skipReason != nil, "needs tmux and a built userlistd/userctl (see the printed reason)"))
struct TUIInputProcessTests {
    typealias H = TUIHarness

    /// Opens the first user's screen and waits until it is loaded.
    func openFirstUser(_ h: H) async throws -> (id: String, name: String, email: String) {
        let user = try h.allUsers()[0]
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        try h.keys("Enter")
        let lines = try await h.waitFor(.seconds(30)) { $0.contains { $0.contains("ID:       \(user.id)") } }
        try #require(lines.contains { $0.contains("ID:       \(user.id)") }, "detail open: \(lines)")
        return user
    }

    /// Pastes `text` into the pane as a terminal would (bracketed, since the TUI asks for it).
    func paste(_ h: H, _ text: String) throws {
        try h.tmux(["set-buffer", "--", text])
        try h.tmux(["paste-buffer", "-p", "-t", h.session])
    }

    func storedName(_ h: H, _ id: String) throws -> String? {
        try JSONValue(parsing: h.userctl(["show", id, "--json"]).output)["name"]?.stringValue
    }

    @Test func aLongPasteArrivesWholeAndActionLettersTypeIntoTheName() async throws {
        let h = try H()
        defer { h.tearDown() }
        let user = try await openFirstUser(h)
        try h.keys("C-u")
        _ = try await h.waitFor { $0.contains { $0.hasSuffix("Name:     ▏") } }

        // 300 characters: more than a name may hold, so the reason shows inline while typing.
        try paste(h, String(repeating: "A", count: 300))
        var lines = try await h.waitFor(.seconds(30)) { $0.contains { $0.contains("cannot be saved: The name is 300") } }
        #expect(lines.contains { $0.contains("cannot be saved: The name is 300 characters long; at most 200 are allowed.") },
                "the reason is shown: \(lines)")
        #expect(!lines[1].contains("Too many messages"), "no rate-limit banner: \(lines[1])")

        // A valid 190-character paste with q and x in it, then Ctrl-S: stored exactly.
        try h.keys("C-u")
        _ = try await h.waitFor { $0.contains { $0.hasSuffix("Name:     ▏") } && $0.contains { $0.contains("cannot be saved: The name cannot be empty.") } }
        let name = String(repeating: "B", count: 180) + " quit x Esc"
        try paste(h, name)
        _ = try await h.waitFor(.seconds(30)) { $0.contains { $0.contains("modified: Enter or Ctrl-S saves") } }
        try h.keys("C-s")
        lines = try await h.waitFor(.seconds(30)) { $0.contains { $0.contains("Version:  2") } }
        #expect(lines.contains { $0.contains("Version:  2") }, "saved: \(lines)")
        #expect(try storedName(h, user.id) == name, "the whole paste was saved, nothing cut or dropped")
    }

    @Test func escWithUnsavedChangesAsksKeepDiscardOrSave() async throws {
        let h = try H()
        defer { h.tearDown() }
        let user = try await openFirstUser(h)
        try h.type(" Draft")
        _ = try await h.waitFor { $0.contains { $0.contains("Name:     \(user.name) Draft▏") } }

        try h.keys("Escape")
        let choices = "s save and go back · d discard them · k or Esc keep editing"
        var lines = try await h.waitFor { $0.contains { $0.contains("Unsaved changes") } && $0.contains { $0.contains(choices) } }
        #expect(lines.contains { $0.contains(choices) }, "asked: \(lines)")
        try h.keys("k")
        lines = try await h.waitFor { !$0.contains { $0.contains("Unsaved changes") } }
        #expect(lines.contains { $0.contains("Name:     \(user.name) Draft▏") }, "kept editing, draft intact: \(lines)")

        try h.keys("Escape")
        _ = try await h.waitFor { $0.contains { $0.contains("Unsaved changes") } }
        try h.keys("d")
        lines = try await h.waitFor { $0[0].contains("· Users ") }
        #expect(lines[0].contains("· Users "), "discarded: back on the list: \(lines[0])")
        #expect(try storedName(h, user.id) == user.name, "nothing was saved")

        // Again, and this time save from the prompt.
        try h.keys("Enter")
        _ = try await h.waitFor { $0.contains { $0.contains("Name:     \(user.name)▏") } }
        try h.type(" Kept")
        _ = try await h.waitFor { $0.contains { $0.contains("Name:     \(user.name) Kept▏") } }
        try h.keys("Escape")
        _ = try await h.waitFor { $0.contains { $0.contains("Unsaved changes") } }
        try h.keys("s")
        lines = try await h.waitFor(.seconds(30)) { $0[0].contains("· Users ") }
        #expect(lines[0].contains("· Users "), "saved and back on the list: \(lines[0])")
        #expect(try storedName(h, user.id) == user.name + " Kept")
    }

    @Test func questionMarkShowsEveryKeyOfTheScreen() async throws {
        let h = try H()
        defer { h.tearDown() }
        // The hint bar may reach the terminal after the rows: wait for both, not for the rows alone.
        let first = try await h.waitFor { H.cursorRow($0) == 2 && $0[h.rows - 2].contains("? help") }
        #expect(first[h.rows - 2].contains("? help"), "the hint bar names the help key: \(first)")
        try h.keys("?")
        let keys = ["  j k", "  PgDn", "G End", "  Enter", "  /", "  Esc", "  r ", "  q ", "  Ctrl-C", "  [stale]", "  wheel", "  ? F1", "  a ", "  d "]
        func listsEveryKey(_ lines: [String]) -> Bool {
            keys.allSatisfy { key in lines.contains { $0.hasPrefix(key) || $0.contains(key) } }
        }
        var lines = try await h.waitFor { $0[0].contains("Help: user list") && listsEveryKey($0) }
        for key in keys {
            #expect(lines.contains { $0.hasPrefix(key) || $0.contains(key) }, "the help lists \(key): \(lines)")
        }
        try h.keys("Escape")  // a key that does not scroll closes it
        lines = try await h.waitFor { $0[0].contains("· Users ") }
        #expect(H.cursorRow(lines) == 2, "closing the help does not also move: \(lines)")

        try h.keys("Enter")
        _ = try await h.waitFor { $0.contains { $0.contains("ID:       ") } }
        try h.type("?")
        lines = try await h.waitFor { $0.contains { $0.contains("?▏") } }
        #expect(lines.contains { $0.contains("Name:") && $0.contains("?▏") }, "on the user screen ? is typed: \(lines)")
        try h.keys("F1")
        let clearKey = { (lines: [String]) in
            lines.contains { $0.contains("Ctrl-U") && $0.contains("clear the field") } && lines.contains { $0.hasPrefix("  Tab Shift-Tab") }
                && lines.contains { $0.contains("Ctrl-K / Ctrl-T") && $0.contains("keep mine / take theirs") }
        }
        lines = try await h.waitFor { $0[0].contains("Help: user screen") && clearKey($0) }
        #expect(clearKey(lines), "\(lines)")
    }

    /// Issue 48 item 8b: the help wraps and scrolls at any size down to 40x10: every key of
    /// the list is in it, whole, no row cut with "…" and none wider than the screen.
    @Test(arguments: [(100, 30), (40, 10)])
    func theHelpWrapsAndScrolls(columns: Int, rows: Int) async throws {
        let h = try H(columns: columns, rows: rows)
        defer { h.tearDown() }
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        try h.keys("?")
        var lines = try await h.waitFor { $0[0].contains("Help: user list") }
        var seen: [String] = []
        for _ in 0..<60 {
            seen += lines.dropFirst().dropLast(2)
            let footer = lines[rows - 2]
            guard let range = footer.range(of: #"(\d+)–(\d+) of (\d+)"#, options: .regularExpression) else { break }
            let numbers = footer[range].split { !$0.isNumber }.compactMap { Int($0) }
            if numbers.count == 3, numbers[1] >= numbers[2] { break }
            try h.keys("j")
            let before = footer
            lines = try await h.waitFor { $0[rows - 2] != before }
        }
        let text = seen.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        for does in ["Ctrl-C", "quit, keeping the session: userctl in this terminal comes back to it",
                     "remove the user under the cursor (asks \"Remove NAME (EMAIL)? y/N\" first; only y removes)",
                     "changed elsewhere: rows not loaded yet may have moved; r reloads", "scroll / select (off with --no-mouse)"] {
            #expect(text.contains(does), "\(columns)x\(rows): the help says \(does): \(seen)")
        }
        #expect(!seen.contains { $0.hasSuffix("…") }, "nothing cut: \(seen)")
        #expect(seen.allSatisfy { DisplayWidth.of($0) <= columns }, "nothing wider than the screen: \(seen)")
        try h.keys("Escape")
        lines = try await h.waitFor { $0[0].contains("· Users ") }
        #expect(lines[0].contains("· Users "), "Esc closes the help: \(lines)")
    }

    @Test func searchMatchesAreHighlightedAndEscClearsTheSearch() async throws {
        let h = try H()
        defer { h.tearDown() }
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        try h.keys("/")
        try h.type("y")
        _ = try await h.waitFor { $0.contains { $0.hasPrefix("/y▏") } }
        try h.keys("C-u")
        _ = try await h.waitFor { $0.contains { $0.hasPrefix("/▏") } }
        try h.type("ya")
        try h.keys("Enter")
        var rows: [String] = []
        let lines = try await h.waitFor { lines in
            rows = ((try? h.screen(escapes: true)) ?? []).filter { $0.contains("@") }
            return lines[0].contains("search: ya") && !rows.isEmpty && rows.allSatisfy { $0.contains("\u{1B}[4m") }
        }
        #expect(lines[0].contains("search: ya"), "Ctrl-U cleared the typed search: \(lines[0])")
        #expect(!rows.isEmpty && rows.allSatisfy { $0.contains("\u{1B}[4m") }, "every matching row is highlighted: \(rows)")

        try h.keys("Escape")
        let cleared = try await h.waitFor { !$0[0].contains("search:") && $0[0].contains("of 200") }
        #expect(!cleared[0].contains("search:"), "Esc cleared the search: \(cleared[0])")
    }

    @Test func bigGShowsTheTrueEndAndPgDnMovesAFullScreenAcrossPages() async throws {
        let h = try H(sampleData: 1000)
        defer { h.tearDown() }
        let users = try h.allUsers()
        try #require(users.count == 1000)
        let listRows = h.rows - 4
        _ = try await h.waitFor { H.shows($0, loaded: 50, of: 1000) && H.cursorRow($0) == 2 }

        // Two screens down crosses the first page's edge (50 rows) without stalling at it.
        try h.keys("NPage")
        _ = try await h.waitFor { $0.contains { $0.hasPrefix("▸ ") && $0.contains(users[listRows].email) } }
        try h.keys("NPage")
        var lines = try await h.waitFor(.seconds(30)) { $0.contains { $0.hasPrefix("▸ ") && $0.contains(users[2 * listRows].email) } }
        #expect(lines.contains { $0.hasPrefix("▸ ") && $0.contains(users[2 * listRows].email) }, "PgDn PgDn: row \(2 * listRows): \(lines)")

        try h.keys("G")
        lines = try await h.waitFor(.seconds(60)) { H.shows($0, loaded: 50, of: 1000) && $0.contains { $0.hasPrefix("▸ ") && $0.contains(users[999].email) } }
        #expect(H.shows(lines, loaded: 50, of: 1000), "G read the last page, not every page: \(lines[0])")
        #expect(lines[0].contains("more above"), "the header says rows come before: \(lines[0])")
        #expect(H.cursorRow(lines) == h.rows - 3 && lines[h.rows - 3].contains(users[999].email), "G: the last user: \(lines)")
        #expect(!lines[h.rows - 2].contains("going to the end"), "done: \(lines[h.rows - 2])")
        try h.keys("g")
        lines = try await h.waitFor { H.cursorRow($0) == 2 && $0[2].contains(users[0].email) && !$0[0].contains("more above") }
        #expect(lines[2].contains(users[0].email), "g: the first user")
    }

    /// `G` among thousands of users reads the last page at once (no walk), and scrolling up from
    /// there loads the rows above while the cursor stays on its user.
    @Test func bigGAmongThousandsShowsTheLastUserThenScrollsUpAcrossTheWindowsTop() async throws {
        let h = try H(sampleData: 3000)
        defer { h.tearDown() }
        let users = try h.allUsers()
        try #require(users.count == 3000)
        _ = try await h.waitFor { H.shows($0, loaded: 50, of: 3000) && H.cursorRow($0) == 2 }

        try h.keys("End")
        var lines = try await h.waitFor {
            $0.contains { $0.hasPrefix("▸ ") && $0.contains(users[2999].name) && $0.contains(users[2999].email) } && H.shows($0, loaded: 50, of: 3000)
        }
        #expect(H.shows(lines, loaded: 50, of: 3000), "G read one page: \(lines[0])")

        // Up three screens: past the window's first row the page above is loaded, and PgUp goes on.
        let listRows = h.rows - 4
        try h.keys("PPage")
        try h.keys("PPage")
        try h.keys("PPage")
        lines = try await h.waitFor { lines in
            H.shows(lines, loaded: 100, of: 3000) && lines.contains { $0.hasPrefix("▸ ") }
        }
        let cursorLine = lines[H.cursorRow(lines) ?? 0]
        let onUser = users[2800...].firstIndex { cursorLine.contains($0.email) }
        #expect(onUser.map { $0 <= 2999 - 2 * listRows } == true, "PgUp went on past the window's first row: \(cursorLine)")
        try h.keys("Home")
        lines = try await h.waitFor { H.cursorRow($0) == 2 && $0[2].contains(users[0].email) && H.shows($0, loaded: 50, of: 3000) }
        #expect(!lines[0].contains("more above"), "Home: back at the top: \(lines[0])")
    }

    /// Whether the program in the pane asked the terminal for mouse reports.
    func mouseRequested(_ h: H) throws -> Bool {
        try h.tmux(["display-message", "-p", "-t", h.session, "#{mouse_any_flag}#{mouse_button_flag}#{mouse_standard_flag}"]).output.contains("1")
    }

    @Test func noMouseLeavesTheMouseToTheTerminal() async throws {
        let h = try H(command: "sleep 60")  // replaced below, once the daemon socket is known
        defer { h.tearDown() }
        try h.tmux(["respawn-pane", "-k", "-t", h.session, h.tuiCommand.replacingOccurrences(of: " tui", with: " --no-mouse tui") + "; sleep 60"])
        let lines = try await h.waitFor { H.cursorRow($0) == 2 }
        #expect(H.cursorRow(lines) == 2, "\(lines)")
        #expect(try !mouseRequested(h), "--no-mouse: no mouse reports asked for")
    }

    @Test func theMouseWheelScrollsAndAClickSelects() async throws {
        let h = try H()
        defer { h.tearDown() }
        let users = try h.allUsers()
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        #expect(try mouseRequested(h), "mouse reports asked for")
        // SGR reports as a terminal sends them: wheel down (65) twice at column 10, row 5.
        for _ in 0..<2 { try h.tmux(["send-keys", "-t", h.session, "-H", "1b", "5b", "3c", "36", "35", "3b", "31", "30", "3b", "35", "4d"]) }
        var lines = try await h.waitFor { $0.contains { $0.hasPrefix("▸ ") && $0.contains(users[6].email) } }
        #expect(lines.contains { $0.hasPrefix("▸ ") && $0.contains(users[6].email) }, "two wheel steps of 3 rows: \(lines)")
        // A left click on screen row 5 (1-based 6) selects the user shown there.
        try h.tmux(["send-keys", "-t", h.session, "-H", "1b", "5b", "3c", "30", "3b", "31", "30", "3b", "36", "4d"])
        lines = try await h.waitFor { H.cursorRow($0) == 5 }
        #expect(H.cursorRow(lines) == 5 && lines[5].contains(users[3].email), "click selected row 5: \(lines)")
    }
}
