import Foundation
import UserListTestSupport
import Glibc
import Testing
import UserListWire
@testable import userctl

/// The interactive screen driven through tmux against a real daemon: keys in with send-keys,
/// the screen out with capture-pane. Each test has its own daemon (200 sample users) and its
/// own tmux server, both killed at the end even on failure. Skipped, with the reason printed,
/// when tmux or the built binaries are missing.
///
/// Layout facts the assertions rely on (see `TUI.listLines`): row 0 is the header, row 1 the
/// banner, then `rows - 4` list rows, the footer, and the status line on the last row. A list
/// row is a 2-column marker ("▸ " on the cursor), the name padded to `nameWidth`, 2 spaces, the
/// email.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)), .disabled(if: TUIHarness.skipReason != nil, "needs tmux and a built userlistd/userctl (see the printed reason)"))
struct TUITests {
    typealias H = TUIHarness

    static func nameWidth(columns: Int) -> Int { max(10, min(40, (columns - 4) / 2)) }

    /// The display column where the email starts on a list row (after the padded name and two
    /// spaces; emails hold no spaces), or nil for a line without that shape.
    static func emailColumn(_ line: String) -> Int? {
        guard let gap = line.range(of: "  ", options: .backwards), gap.upperBound < line.endIndex,
              line[gap.upperBound...].first != " " else { return nil }
        return DisplayWidth.of(String(line[..<gap.upperBound]))
    }

    // MARK: 1. navigation

    @Test func navigationMovesTheCursorAndLoadsTheNextPage() async throws {
        let h = try H()
        defer { h.tearDown() }
        let users = try h.allUsers()
        try #require(users.count == 200)
        let listRows = h.rows - 4

        var lines = try await h.waitFor { H.shows($0, loaded: 50, of: 200) && H.cursorRow($0) == 2 && $0[h.rows - 2].contains("j/k move") }
        #expect(H.shows(lines, loaded: 50, of: 200), "\(lines)")
        #expect(lines[2].contains(users[0].email), "first user on the first row: \(lines[2])")
        #expect(lines[h.rows - 1].contains("connected"), "status line on the last row: \(lines)")
        #expect(lines[h.rows - 2].contains("j/k move"), "footer above it")
        #expect(!lines.contains { $0.contains(users[50].email) }, "the 51st user is not loaded yet")

        try h.keys("j", "j")
        lines = try await h.waitFor { H.cursorRow($0) == 4 }
        #expect(H.cursorRow(lines) == 4 && lines[4].contains(users[2].email), "j j: \(lines.prefix(6))")
        try h.keys("k")
        lines = try await h.waitFor { H.cursorRow($0) == 3 }
        #expect(H.cursorRow(lines) == 3 && lines[3].contains(users[1].email), "k: \(lines.prefix(6))")
        try h.keys("Down", "Down")
        lines = try await h.waitFor { H.cursorRow($0) == 5 }
        #expect(H.cursorRow(lines) == 5 && lines[5].contains(users[3].email), "Down Down: \(lines.prefix(7))")
        try h.keys("Up")
        lines = try await h.waitFor { H.cursorRow($0) == 4 }
        #expect(H.cursorRow(lines) == 4, "Up: \(lines.prefix(6))")

        // PgDn: one screenful down; the cursor stays on screen (the list scrolls).
        try h.keys("NPage")
        let afterPage = 2 + listRows
        lines = try await h.waitFor { H.cursorRow($0).map { lines in lines >= 2 } == true && $0.contains { $0.hasPrefix("▸ ") && $0.contains(users[afterPage].email) } }
        #expect(lines.contains { $0.hasPrefix("▸ ") && $0.contains(users[afterPage].email) }, "PgDn: cursor on user \(afterPage): \(lines)")
        #expect(H.cursorRow(lines) == h.rows - 3, "PgDn scrolled: the cursor is on the last list row")
        #expect(H.shows(lines, place: afterPage + 1, of: 200), "the title says where the cursor is: \(lines[0])")

        // G: the last user of the whole list, its last page read at once (none in between).
        try h.keys("G")
        lines = try await h.waitFor { H.shows($0, loaded: 50, of: 200) && $0.contains { $0.hasPrefix("▸ ") && $0.contains(users[199].email) } }
        #expect(H.shows(lines, loaded: 50, of: 200) && lines[0].contains("more above"), "G loads the last page only: \(lines[0])")
        #expect(H.cursorRow(lines) == h.rows - 3 && lines[h.rows - 3].contains(users[199].email), "G: the last user: \(lines)")
        #expect(H.shows(lines, place: 200, of: 200), "G: the title says the last of 200, not the rows read: \(lines[0])")
        #expect(lines[h.rows - 2].contains("j/k move"), "nothing left to load: \(lines[h.rows - 2])")
        // Past the end the cursor stays: the k after the j (keys are handled in order) lands on
        // the user before the last, not anywhere a wrong move of j would have led.
        try h.keys("j")
        try h.keys("k")
        lines = try await h.waitFor { $0.contains { $0.hasPrefix("▸ ") && $0.contains(users[198].email) } }
        #expect(H.shows(lines, place: 199, of: 200), "j past the end stayed, k moved up one: \(lines[0])")
        try h.keys("j")
        lines = try await h.waitFor { $0.contains { $0.hasPrefix("▸ ") && $0.contains(users[199].email) } }

        try h.keys("PPage")
        lines = try await h.waitFor { $0.contains { $0.hasPrefix("▸ ") && $0.contains(users[199 - listRows].email) } }
        #expect(H.cursorRow(lines) == 2, "PgUp: one screenful up, at the top row: \(lines)")
        try h.keys("g")
        lines = try await h.waitFor { H.cursorRow($0) == 2 && $0[2].contains(users[0].email) }
        #expect(H.cursorRow(lines) == 2 && lines[2].contains(users[0].email), "g: back to the first user")
        #expect(H.shows(lines, loaded: 50, of: 200) && !lines[0].contains("more above"), "g reloads the first page: \(lines[0])")
    }

    /// A refresh with the cursor on the last loaded row: the first page comes back with the
    /// cursor on its last row again, and that row being on screen loads the next page.
    @Test func refreshOnTheLastRowStillLoadsTheNextPage() async throws {
        let h = try H()
        defer { h.tearDown() }
        let users = try h.allUsers()
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        try h.keys("G")
        var lines = try await h.waitFor { H.shows($0, loaded: 50, of: 200) && $0[0].contains("more above") && H.cursorRow($0) == h.rows - 3 }
        #expect(H.cursorRow(lines) == h.rows - 3 && lines[h.rows - 3].contains(users[199].email), "G: on the last user")
        try h.keys("r")
        // The refresh shows 50 of 200 only briefly: with the cursor's row on screen, the next
        // page follows at once (it used to stay at 50, the cursor stuck on the last row).
        lines = try await h.waitFor { H.shows($0, loaded: 100, of: 200) }
        #expect(H.shows(lines, loaded: 100, of: 200), "the next page loads after the refresh: \(lines[0])")
        try h.keys("j")
        lines = try await h.waitFor { $0.contains { $0.hasPrefix("▸ ") && $0.contains(users[50].email) } }
        #expect(lines.contains { $0.hasPrefix("▸ ") && $0.contains(users[50].email) }, "and the cursor moves on to the 51st user: \(lines)")
    }

    // MARK: 2. edit and save

    @Test func editSaveAndSeeItOnTheListAndInTheStore() async throws {
        let h = try H()
        defer { h.tearDown() }
        let users = try h.allUsers()
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        try h.keys("j")
        var lines = try await h.waitFor { H.cursorRow($0) == 3 }
        #expect(lines[3].contains(users[1].email))

        try h.keys("Enter")
        lines = try await h.waitFor { $0.contains { $0.contains("ID:       \(users[1].id)") } && $0.contains { $0.contains("Version:  1") } }
        #expect(lines.contains { $0.contains("Name:     \(users[1].name)") }, "detail of the selected user: \(lines.prefix(10))")
        #expect(lines.contains { $0.contains("Email:    \(users[1].email)") })

        try h.keys(Array(repeating: "BSpace", count: users[1].name.count + 2))
        lines = try await h.waitFor { $0.contains { $0.hasSuffix("Name:     ▏") } }
        #expect(lines.contains { $0.hasSuffix("Name:     ▏") }, "name erased: \(lines.prefix(6))")
        let newName = "Aaron Édouard 山田"
        try h.type(newName)
        lines = try await h.waitFor { $0.contains { $0.contains("Name:     \(newName)▏") } && $0.contains { $0.contains("modified: Enter or Ctrl-S saves") } }
        #expect(lines.contains { $0.contains("Name:     \(newName)▏") }, "typed: \(lines.prefix(10))")
        #expect(lines.contains { $0.contains("modified: Enter or Ctrl-S saves") })

        try h.keys("Enter")
        lines = try await h.waitFor { $0.contains { $0.contains("Version:  2") } }
        #expect(lines.contains { $0.contains("Version:  2") }, "saved: \(lines.prefix(12))")
        #expect(lines[0].contains("User: \(newName)"), "the header shows the stored name")
        #expect(!lines.contains { $0.contains("modified") }, "nothing left to save")

        try h.keys("Escape")
        lines = try await h.waitFor { $0.contains { $0.contains(newName) && $0.contains(users[1].email) } }
        #expect(lines.contains { $0.contains(newName) && $0.contains(users[1].email) }, "the list shows the new name: \(lines)")
        #expect(lines[0].contains("· Users "), "back on the list")

        let show = try h.userctl(["show", users[1].id, "--json"])
        #expect(show.status == 0, "\(show.output)")
        let stored = try JSONValue(parsing: show.output)
        #expect(stored["name"]?.stringValue == newName)
        #expect(stored["version"]?.int64Value == 2)
    }

    /// Keystrokes arriving one by one while earlier drafts are still being answered: none is
    /// lost. (A reply used to overtake the state update it follows, and the next keystroke was
    /// then appended to a stale draft.)
    @Test func typingFastKeepsEveryKeystroke() async throws {
        let h = try H()
        defer { h.tearDown() }
        let users = try h.allUsers()
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        try h.keys("Enter")
        _ = try await h.waitFor { $0.contains { $0.contains("ID:       \(users[0].id)") } }
        for _ in 0..<(users[0].name.count + 1) { try h.keys("BSpace") }
        let typed = "Quick Brown Fox Jumps 狐"
        for character in typed { try h.type(String(character)) }
        var lines = try await h.waitFor { $0.contains { $0.contains("modified: Enter or Ctrl-S saves") } && $0.contains { $0.contains("Name:     \(typed)▏") } }
        #expect(lines.contains { $0.contains("Name:     \(typed)▏") }, "every keystroke kept: \(lines.prefix(8))")
        // What is stored after the save (handled after every keystroke) is the whole name too.
        try h.keys("C-s")
        lines = try await h.waitFor { $0.contains { $0.contains("Version:  2") } }
        let stored = try JSONValue(parsing: h.userctl(["show", users[0].id, "--json"]).output)
        #expect(stored["name"]?.stringValue == typed)
    }

    // MARK: 3. conflict

    @Test func aConflictShowsTheStoredNameAndKeepsTheDraft() async throws {
        let h = try H()
        defer { h.tearDown() }
        let users = try h.allUsers()
        let user = users[0]
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        try h.keys("Enter")
        var lines = try await h.waitFor { $0.contains { $0.contains("ID:       \(user.id)") } && $0.contains { $0.contains("Version:  1") } }
        #expect(lines.contains { $0.contains("Name:     \(user.name)▏") }, "\(lines.prefix(10))")

        try h.type(" Draft")
        let draft = user.name + " Draft"
        lines = try await h.waitFor { $0.contains { $0.contains("Name:     \(draft)▏") } && $0.contains { $0.contains("modified") } }
        #expect(lines.contains { $0.contains("modified") }, "dirty: \(lines.prefix(10))")

        // Someone else renames the same user, from another connection and session: merged into
        // the screen at once, as a conflict on the name (theirs beside mine), without a key. Its
        // author comes a moment later, from the history ("someone saved" until then).
        let rename = try h.userctl(["rename", user.id, "Stored Elsewhere"])
        #expect(rename.status == 0, "\(rename.output)")
        lines = try await h.waitFor { $0.contains { $0.contains("root saved \"Stored Elsewhere\"") } && $0.contains { $0.contains("Version:  2") } }
        #expect(lines.contains { $0.contains("⚡ root saved \"Stored Elsewhere\" (yours is above)") }, "conflict: \(lines.prefix(14))")
        #expect(lines.contains { $0.contains("Name:     \(draft)▏") }, "the typed draft is kept: \(lines.prefix(14))")

        // A save waits for a choice; the store keeps the other save meanwhile.
        try h.keys("C-s")
        lines = try await h.waitFor { $0.contains { $0.contains("Settle each ⚡ conflict before saving") } }
        #expect(lines.contains { $0.contains("Settle each ⚡ conflict before saving") }, "\(lines.prefix(14))")
        let stored = try JSONValue(parsing: h.userctl(["show", user.id, "--json"]).output)
        #expect(stored["name"]?.stringValue == "Stored Elsewhere", "the store kept the other save")

        // Keep mine: the save overwrites on purpose.
        try h.keys("C-k")
        lines = try await h.waitFor { !$0.contains { $0.contains("⚡") } }
        #expect(lines.contains { $0.contains("Name:     \(draft)▏") }, "still the draft")
        try h.keys("C-s")
        lines = try await h.waitFor { $0.contains { $0.contains("Version:  3") } }
        #expect(lines.contains { $0.contains("Version:  3") }, "second save: \(lines.prefix(14))")
        let overwritten = try JSONValue(parsing: h.userctl(["show", user.id, "--json"]).output)
        #expect(overwritten["name"]?.stringValue == draft)
    }

    // MARK: 4. live change from another client

    @Test func aRenameByAnotherClientShowsUpWithoutAKey() async throws {
        let h = try H()
        defer { h.tearDown() }
        let users = try h.allUsers()
        var lines = try await h.waitFor { H.cursorRow($0) == 2 && $0.contains { $0.contains(users[5].email) } }
        #expect(lines[7].contains(users[5].email), "\(lines)")

        // Renamed in place: the row keeps its position and lights up.
        let inPlace = users[5].name + "x"
        let start = ContinuousClock.now
        #expect(try h.userctl(["rename", users[5].id, inPlace]).status == 0)
        var highlighted = false
        lines = try await h.waitFor { lines in
            guard lines.contains(where: { $0.contains(inPlace + " ") && $0.contains(users[5].email) }) else { return false }
            if !highlighted, let raw = try? h.screen(escapes: true),
               let row = raw.first(where: { $0.contains(inPlace) && $0.contains(users[5].email) }) {
                highlighted = row.contains("\u{1B}[7m") || row.contains(";7m")
            }
            return true
        }
        #expect(lines.contains { $0.contains(inPlace + " ") && $0.contains(users[5].email) }, "live rename: \(lines)")
        print("TUI: live rename shown after \(ContinuousClock.now - start)")
        #expect(highlighted, "the changed row is highlighted")

        // Renamed to a name that sorts first: the row moves to the top.
        #expect(try h.userctl(["rename", users[8].id, "Aaaa Moved"]).status == 0)
        var movedHighlighted = false
        lines = try await h.waitFor { lines in
            guard lines.contains(where: { $0.contains("Aaaa Moved") }) else { return false }
            let row = (try? h.screen(escapes: true))?.first { $0.contains("Aaaa Moved") } ?? ""
            movedHighlighted = movedHighlighted || row.contains("\u{1B}[7m") || row.contains(";7m")
            return true
        }
        #expect(lines.contains { $0.contains("Aaaa Moved") && $0.contains(users[8].email) }, "moved row: \(lines)")
        #expect(movedHighlighted, "the moved row is highlighted too")
        #expect(H.shows(lines, loaded: 50, of: 200), "still 50 of 200: \(lines[0])")
    }

    // MARK: 5. resize

    @Test func resizeRedrawsToTheNewSize() async throws {
        let h = try H()
        defer { h.tearDown() }
        let users = try h.allUsers()
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        for _ in 0..<20 { try h.keys("j") }
        var lines = try await h.waitFor { H.cursorRow($0) == 22 }
        #expect(lines[22].contains(users[20].email))

        for (columns, rows) in [(60, 20), (120, 40), (40, 12)] {
            try h.resize(columns: columns, rows: rows)
            lines = try await h.waitFor { lines in
                lines.count == rows && lines[rows - 1].contains("connected") && lines[0].contains("· Users ")
                    && lines.allSatisfy { DisplayWidth.of($0) <= columns }
                    && lines.contains { TUITests.emailColumn($0) == 2 + TUITests.nameWidth(columns: columns) + 2 }
                    && lines.contains { $0.hasPrefix("▸ ") }
            }
            #expect(lines.count == rows, "\(columns)x\(rows): \(lines)")
            #expect(lines.allSatisfy { DisplayWidth.of($0) <= columns }, "no line wider than \(columns): \(lines)")
            #expect(lines.last?.contains("connected") == true, "status line on the bottom row: \(lines)")
            #expect(H.shows(lines, place: 21, of: 200), "the title says where the cursor is: \(lines[0])")
            #expect(lines[2..<(rows - 2)].allSatisfy { $0.count > 2 }, "one user per list row: \(lines)")
            let emailRows = Array(lines[2..<(rows - 2)])
            #expect(emailRows.allSatisfy { Self.emailColumn($0) == 2 + Self.nameWidth(columns: columns) + 2 }, "laid out for \(columns) columns: \(emailRows)")
            #expect(lines.contains { $0.hasPrefix("▸ ") && $0.contains(String(users[20].email.prefix(8))) },
                    "the cursor's row stays on screen: \(lines)")
            let wide = try h.screen(keepTrailingSpaces: true)
            #expect(wide.allSatisfy { DisplayWidth.of($0) == columns }, "every row exactly \(columns) wide, as tmux sees it")
        }
    }

    // MARK: 6. the terminal after quitting

    static let prompt = "ULCT$"

    @Test func quitAndSIGTERMRestoreTheTerminal() async throws {
        let h = try H(columns: 100, rows: 30, command: "env PS1='\(Self.prompt) ' /bin/sh")
        defer { h.tearDown() }
        _ = try await h.waitFor { $0.first?.hasPrefix(Self.prompt) == true }
        let before = try await sttySettings(h)
        #expect(before.contains("icanon") && before.contains("echo"), "a cooked terminal to begin with: \(before)")

        for ending in ["q", "SIGTERM"] {
            try h.type("clear; " + h.tuiCommand + "; echo EXIT-$?")
            try h.keys("Enter")
            var lines = try await h.waitFor { H.shows($0, place: 1, of: 200) && H.cursorRow($0) == 2 }
            #expect(lines[0].contains("userctl · Users"), "the TUI is up: \(lines)")
            if ending == "q" {
                try h.keys("q")
            } else {
                let pid = try #require(h.tuiPID(), "userctl's pid")
                kill(pid, SIGTERM)
            }
            let status = ending == "q" ? "EXIT-0" : "EXIT-\(128 + SIGTERM)"
            lines = try await h.waitFor { $0.contains(status) && $0.last { !$0.isEmpty } == Self.prompt }
            #expect(lines.contains(status), "\(ending): \(lines)")
            #expect(lines.last { !$0.isEmpty } == Self.prompt, "\(ending): the shell prompt is back: \(lines)")
            #expect(!lines.contains { $0.contains("userctl · ") || $0.contains("connected") }, "\(ending): the alternate screen is left: \(lines)")
            let after = try await sttySettings(h)
            for setting in ["icanon", "echo", "isig", "icrnl", "opost", "iexten"] {
                #expect(after.contains(setting), "\(ending): \(setting) restored: \(after)")
            }
            #expect(after == before, "\(ending): the same settings as before")
        }
        // The cursor is visible again: tmux tracks it per pane.
        #expect(try h.tmux(["display-message", "-p", "-t", h.session, "#{cursor_flag}#{alternate_on}"]).output.hasPrefix("10"))
    }

    /// Runs `stty -a` in the pane's shell and returns its settings (words like `icanon`, `-echonl`).
    func sttySettings(_ h: H) async throws -> Set<String> {
        try h.type("clear; stty -a; echo STTY-$((6*7))")
        try h.keys("Enter")
        let lines = try await h.waitFor { $0.contains("STTY-42") && $0.last { !$0.isEmpty } == Self.prompt }
        let end = try #require(lines.firstIndex(of: "STTY-42"), "stty ran: \(lines)")
        let output = lines[..<end].joined(separator: "\n")
        return Set(output.split { $0 == " " || $0 == ";" || $0 == "\n" }.map(String.init))
    }

    // MARK: 7. names in any script line up

    @Test func namesInAnyScriptLineUp() async throws {
        let h = try H()
        defer { h.tearDown() }
        let users = try h.allUsers()
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        let expectedColumn = 2 + Self.nameWidth(columns: h.columns) + 2

        // Search is a substring match (folded like the store's key), so each search names a few
        // users by their email: 山田太郎 and 佐藤花子 (CJK), and users whose names end in an emoji
        // (🐙; ☕️ with a variation selector).
        func fold(_ text: String) -> String { text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil) }
        func local(_ email: String) -> String { String(email.prefix { $0 != "@" }) }
        let octopus = try #require(users.first { $0.name.contains("🐙") }, "sample data has 🐙")
        let coffee = try #require(users.first { $0.name.contains("☕️") }, "sample data has ☕️")
        for (search, wide) in [("yamada.taro", ["山田太郎"]), (local(octopus.email), ["🐙"]),
                               ("sato.hanako", ["佐藤花子"]), (local(coffee.email), ["☕️"])] {
            let expected = users.filter { fold($0.name).contains(fold(search)) || fold($0.email).contains(fold(search)) }
            try #require(wide.allSatisfy { w in expected.contains { $0.name.contains(w) } }, "sample data has \(wide)")
            try h.keys("/")
            try h.keys(Array(repeating: "BSpace", count: 40))  // the prompt starts with the current search
            try h.type(search)
            _ = try await h.waitFor { $0.contains { $0.hasPrefix("/\(search)▏") } }
            try h.keys("Enter")
            let lines = try await h.waitFor { lines in
                lines[0].contains("search: \(search)") && lines.filter { $0.contains("@") }.count == min(expected.count, h.rows - 4)
                    && expected.prefix(h.rows - 4).allSatisfy { user in lines.contains { $0.contains(user.email) } }
            }
            let rows = lines.filter { $0.contains("@") }
            #expect(lines[0].contains("search: \(search)"), "\(lines)")
            #expect(rows.count == min(expected.count, h.rows - 4), "one row per match: \(rows)")
            for user in expected.prefix(h.rows - 4) {
                let row = rows.first { $0.contains(user.email) }
                #expect(row?.contains(user.name) == true, "\(user.name) and \(user.email) on one row (no wrap): \(rows)")
                #expect(row.flatMap(Self.emailColumn) == expectedColumn, "email of \(user.name) at column \(expectedColumn): \(row ?? "-")")
            }
            for w in wide {
                #expect(rows.contains { $0.contains(w) }, "a row with \(w) is on screen")
            }
            #expect(lines.count == h.rows && lines.last?.contains("connected") == true, "nothing wrapped: \(lines)")
            let exact = try h.screen(keepTrailingSpaces: true)
            let widths = exact.map { DisplayWidth.of($0) }
            #expect(widths.allSatisfy { $0 == h.columns }, "every row \(h.columns) columns as tmux laid it out: \(zip(widths, exact).filter { $0.0 != h.columns })")
        }
    }
}
