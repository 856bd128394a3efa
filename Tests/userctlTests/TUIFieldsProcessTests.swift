import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire

/// Issue 46 items 1 to 4, through tmux against a real daemon: every field of the user screen
/// (Tab between them, validation as you type, modified marks), others' saves merged on screen
/// (followed fields, conflicts settled with Ctrl-K / Ctrl-T, a removal created again), `a` and
/// `d` on the list, and a read-only session that takes no edits. Every wait is for a screen
/// condition, never a fixed time.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(3)), .disabled(if: TUIHarness.skipReason != nil, "needs tmux and a built userlistd/userctl (see the printed reason)"))
struct TUIFieldsProcessTests {
    typealias H = TUIHarness

    /// Opens the user on the list's row `index` (from the top) and waits for its screen.
    func open(_ h: H, _ user: (id: String, name: String, email: String), row index: Int = 0) async throws {
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        if index > 0 { try h.keys(Array(repeating: "j", count: index)) }
        _ = try await h.waitFor { H.cursorRow($0) == 2 + index }
        try h.keys("Enter")
        let lines = try await h.waitFor { $0.contains { $0.contains("ID:       \(user.id)") } && $0.contains { $0.contains("Name:     \(user.name)▏") } }
        try #require(lines.contains { $0.contains("Name:     \(user.name)▏") }, "the user's screen, the name focused: \(lines)")
    }

    /// The line of a field ("Name:", "Email:", "Avatar:") and the line under it.
    static func field(_ label: String, _ lines: [String]) -> (line: String, note: String) {
        guard let index = lines.firstIndex(where: { $0.hasPrefix("  \(label)") }) else { return ("", "") }
        return (lines[index], index + 1 < lines.count ? lines[index + 1] : "")
    }

    static func show(_ h: H, _ id: String) throws -> JSONValue {
        try JSONValue(parsing: h.userctl(["show", id, "--json"]).output)
    }

    // MARK: 1. every field

    @Test func tabMovesBetweenTheFieldsAndSavesTheEmail() async throws {
        let h = try H()
        defer { h.tearDown() }
        let user = try h.allUsers()[1]
        try await open(h, user, row: 1)

        try h.keys("Tab")
        var lines = try await h.waitFor { Self.field("Email:", $0).line.hasSuffix("\(user.email)▏") }
        #expect(Self.field("Email:", lines).line.hasSuffix("\(user.email)▏"), "Tab: the email has the cursor: \(lines)")
        #expect(Self.field("Name:", lines).line == "  Name:     \(user.name)", "the name no longer has it: \(lines)")
        try h.keys("Tab")
        lines = try await h.waitFor { Self.field("Avatar:", $0).line.hasSuffix("▏") }
        #expect(Self.field("Avatar:", lines).line.hasSuffix("▏"), "Tab: the avatar URL: \(lines)")
        try h.keys("BTab")
        lines = try await h.waitFor { Self.field("Email:", $0).line.hasSuffix("▏") }
        #expect(Self.field("Email:", lines).line.hasSuffix("\(user.email)▏"), "Shift-Tab: back to the email: \(lines)")

        // Typing edits the email; its validation message shows as it is typed.
        try h.keys("C-u")
        try h.type("grace@")
        lines = try await h.waitFor { Self.field("Email:", $0).line.hasSuffix("grace@▏") && Self.field("Email:", $0).note.contains("✕") }
        #expect(Self.field("Email:", lines).note.contains("✕"), "an invalid email says why under the field: \(lines)")
        #expect(lines.contains { $0.contains("cannot be saved") }, "and that it cannot be saved: \(lines)")
        // And that it is modified, as a valid change is: the person sees it differs from the stored email.
        let email = try #require(lines.firstIndex { $0.hasPrefix("  Email:") })
        #expect(lines.count > email + 2 && lines[email + 2].contains("• modified (was \"\(user.email)\")"),
                "the invalid email is marked modified too: \(lines)")
        try h.type("navy.example")
        lines = try await h.waitFor {
            Self.field("Email:", $0).line.hasSuffix("grace@navy.example▏") && Self.field("Email:", $0).note.contains("modified")
                && $0.contains { $0.contains("modified: Enter or Ctrl-S saves") }
        }
        #expect(Self.field("Email:", lines).note.contains("• modified (was \"\(user.email)\")"), "the email is marked modified: \(lines)")
        #expect(!Self.field("Name:", lines).note.contains("modified"), "the name is not: \(lines)")

        try h.keys("Enter")
        lines = try await h.waitFor { $0.contains { $0.contains("Version:  2") } && !$0.contains { $0.contains("modified") } }
        #expect(lines.contains { $0.contains("Version:  2") }, "saved: \(lines)")
        let stored = try Self.show(h, user.id)
        #expect(stored["email"]?.stringValue == "grace@navy.example")
        #expect(stored["name"]?.stringValue == user.name, "only the email changed")
    }

    /// A URL typed into the untouched avatar field starts with h: it types, it does not open the
    /// history (h and d are commands only in an unchanged name).
    @Test func anAvatarURLTypedIntoAnUntouchedFieldTypes() async throws {
        let h = try H()
        defer { h.tearDown() }
        let user = try h.allUsers()[2]
        try await open(h, user, row: 2)
        try h.keys("Tab", "Tab")
        _ = try await h.waitFor { Self.field("Avatar:", $0).line.hasSuffix("▏") }
        try h.type("https://x.example/d.png")
        let lines = try await h.waitFor { Self.field("Avatar:", $0).line.contains("https://x.example/d.png▏") }
        #expect(Self.field("Avatar:", lines).line.contains("https://x.example/d.png▏"), "typed, not history: \(lines)")
        #expect(!lines.contains { $0.contains("History:") }, "no history screen: \(lines)")
    }

    // MARK: 2. merge on screen

    /// Someone else changes the email (followed: marked) and the name this person is editing
    /// (a conflict: theirs beside mine, with the keys); Ctrl-K keeps mine and the save keeps
    /// both; the next conflict is settled with Ctrl-T.
    @Test func aLiveConflictShowsTheirsAndIsSettledOnScreen() async throws {
        let h = try H()
        defer { h.tearDown() }
        let user = try h.allUsers()[0]
        try await open(h, user)
        // Pasted: the daemon gets the draft in one piece. Typed keys may come in two reads, so
        // two drafts, and the second would clear the mark of a save landing between them.
        try h.tmux(["set-buffer", "--", " Draft"])
        try h.tmux(["paste-buffer", "-p", "-t", h.session])
        let draft = user.name + " Draft"
        _ = try await h.waitFor { $0.contains { $0.contains("Name:     \(draft)▏") } && $0.contains { $0.contains("modified: Enter") } }
        // The screen says "modified" before the draft is sent: a save landing before the daemon
        // has it would find an untouched screen, which shows what is stored, unmarked.
        #expect(try await h.waitForDaemonDraft(), "the daemon has the draft")

        // An untouched field follows theirs, marked with who changed it.
        #expect(try h.userctl(["set", user.id, "--email", "elsewhere@example.org"]).status == 0)
        var lines = try await h.waitFor { Self.field("Email:", $0).line.contains("elsewhere@example.org") && Self.field("Email:", $0).note.contains("root changed the email") }
        #expect(Self.field("Email:", lines).note.contains("↻ root changed the email just now"), "followed, marked: \(lines)")
        #expect(lines.contains { $0.contains("Name:     \(draft)▏") }, "the draft is kept: \(lines)")

        // The field being edited: a conflict, theirs beside mine, and the keys to choose.
        #expect(try h.userctl(["rename", user.id, "Stored Elsewhere"]).status == 0)
        lines = try await h.waitFor { Self.field("Name:", $0).note.contains("root saved \"Stored Elsewhere\"") }
        let note = Self.field("Name:", lines).note
        #expect(note.contains("⚡ root saved \"Stored Elsewhere\"") && note.contains("Ctrl-K keep mine") && note.contains("Ctrl-T take theirs"),
                "theirs beside mine: \(lines)")
        #expect(Self.field("Name:", lines).line.contains("\(draft)▏"), "mine is still in the field: \(lines)")
        #expect(lines.contains { $0.contains("Settle each ⚡ conflict before saving") }, "the save waits for a choice: \(lines)")

        try h.keys("C-k")
        lines = try await h.waitFor { !$0.contains { $0.contains("⚡") } && $0.contains { $0.contains("modified: Enter or Ctrl-S saves") } }
        #expect(!lines.contains { $0.contains("⚡") }, "kept mine: no conflict left: \(lines)")
        try h.keys("C-s")
        lines = try await h.waitFor { $0.contains { $0.contains("Version:  4") } && !$0.contains { $0.contains("modified") } }
        #expect(lines.contains { $0.contains("Version:  4") }, "saved over theirs on purpose: \(lines)")
        var stored = try Self.show(h, user.id)
        #expect(stored["name"]?.stringValue == draft && stored["email"]?.stringValue == "elsewhere@example.org", "mine and theirs: \(stored)")

        // Again, taking theirs this time.
        try h.type(" Again")
        _ = try await h.waitFor { $0.contains { $0.contains("Name:     \(draft) Again▏") } && $0.contains { $0.contains("modified: Enter") } }
        #expect(try await h.waitForDaemonDraft(), "the daemon has the draft")
        #expect(try h.userctl(["rename", user.id, "Theirs Wins"]).status == 0)
        lines = try await h.waitFor { Self.field("Name:", $0).note.contains("saved \"Theirs Wins\"") }
        try h.keys("C-t")
        lines = try await h.waitFor { $0.contains { $0.contains("Name:     Theirs Wins▏") } && !$0.contains { $0.contains("⚡") || $0.contains("modified") } }
        #expect(lines.contains { $0.contains("Name:     Theirs Wins▏") }, "took theirs: \(lines)")
        #expect(!lines.contains { $0.contains("modified") }, "nothing left to save: \(lines)")
        stored = try Self.show(h, user.id)
        #expect(stored["name"]?.stringValue == "Theirs Wins")
    }

    /// The user is removed while its screen is open: the screen says who, and Ctrl-R creates
    /// it again with what the screen holds.
    @Test func aRemovalShowsWhoAndCtrlRCreatesTheUserAgain() async throws {
        let h = try H()
        defer { h.tearDown() }
        let user = try h.allUsers()[0]
        try await open(h, user)
        #expect(try h.userctl(["remove", user.id]).status == 0)
        var lines = try await h.waitFor { $0.contains { $0.contains("You removed this user") } }
        #expect(lines.contains { $0.contains("You removed this user.") && $0.contains("Ctrl-R create it again") }, "\(lines)")
        #expect(lines.joined().contains("Esc discard"), "\(lines)")
        #expect(!lines.joined().contains("type to edit"), "a removed user takes no typing: \(lines)")
        try h.keys("C-r")
        // Created again: the screen shows a stored user again (its version is the store's, not 1).
        lines = try await h.waitFor { !$0.contains { $0.contains("removed this user") } && $0.contains { $0.hasPrefix("  Version:") } }
        #expect(!lines.contains { $0.contains("removed this user") }, "created again: \(lines)")
        #expect(lines.contains { $0.hasPrefix("  Version:") }, "a stored user again: \(lines)")
        let stored = try Self.show(h, user.id)
        #expect(stored["name"]?.stringValue == user.name && stored["email"]?.stringValue == user.email, "back in the store: \(stored)")
    }

    /// A Ctrl-R re-create that is refused (another user took the email meanwhile) leaves the
    /// title naming the user, as before it: it is no "New user".
    @Test func aRefusedCtrlRKeepsTheUserInTheTitle() async throws {
        let h = try H()
        defer { h.tearDown() }
        let user = try h.allUsers()[0]
        try await open(h, user)
        #expect(try h.userctl(["remove", user.id]).status == 0)
        _ = try await h.waitFor { $0.contains { $0.contains("You removed this user") } }
        #expect(try h.userctl(["add", "--name", "Email Taker", "--email", user.email]).status == 0)
        try h.keys("C-r")
        let lines = try await h.waitFor { $0.contains { $0.contains("already used") } }
        #expect(lines[0].contains("User: \(user.name)") && !lines[0].contains("New user"),
                "the refused re-create is still the user: \(lines)")
    }

    // MARK: 3. add and remove

    @Test func aOnTheListCreatesAUser() async throws {
        let h = try H()
        defer { h.tearDown() }
        _ = try await h.waitFor { H.cursorRow($0) == 2 }
        try h.keys("a")
        var lines = try await h.waitFor { $0[0].contains("New user") && $0.contains { $0.hasSuffix("Name:     ▏") } }
        #expect(lines[0].contains("New user") && lines.contains { $0.hasSuffix("Name:     ▏") }, "an empty user screen: \(lines)")
        try h.keys("Enter")  // nothing typed yet: the screen says what it needs, not nothing
        lines = try await h.waitFor { $0.contains { $0.contains("Nothing to save yet") } }
        #expect(lines.contains { $0.contains("type the new user's name") }, "\(lines)")
        try h.type("Ada Added")
        try h.keys("Tab")
        try h.type("ada.added@example.org")
        lines = try await h.waitFor { $0.contains { $0.contains("Email:    ada.added@example.org▏") } && $0.contains { $0.contains("modified: Enter or Ctrl-S saves") } }
        #expect(lines.contains { $0.contains("modified: Enter or Ctrl-S saves") }, "\(lines)")
        try h.keys("Enter")
        lines = try await h.waitFor { $0[0].contains("User: Ada Added") && $0.contains { $0.contains("Version:  1") } }
        #expect(lines[0].contains("User: Ada Added"), "created: \(lines)")
        let users = try h.allUsers()
        #expect(users.count == 201)
        #expect(users.contains { $0.name == "Ada Added" && $0.email == "ada.added@example.org" }, "in the store")
    }

    @Test func dAsksAndRemovesOnlyOnY() async throws {
        let h = try H()
        defer { h.tearDown() }
        let users = try h.allUsers()
        _ = try await h.waitFor { H.cursorRow($0) == 2 && $0[2].contains(users[0].email) }
        let question = "Remove \(users[0].name) (\(users[0].email))? y/N"
        try h.keys("d")
        var lines = try await h.waitFor { $0.contains { $0.contains(question) } }
        #expect(lines.contains { $0.contains(question) }, "d asks: \(lines)")
        try h.keys("n")
        lines = try await h.waitFor { !$0.contains { $0.contains("Remove ") } && $0.contains { $0.contains("j/k move") } }
        #expect(!lines.contains { $0.contains(question) }, "n: the question is gone: \(lines)")
        #expect(try h.userctl(["show", users[0].id]).status == 0, "n kept the user")
        try h.keys("d")
        _ = try await h.waitFor { $0.contains { $0.contains(question) } }
        try h.keys("Escape")
        _ = try await h.waitFor { !$0.contains { $0.contains("Remove ") } }
        #expect(try h.userctl(["show", users[0].id]).status == 0, "Esc kept the user")
        try h.keys("d")
        _ = try await h.waitFor { $0.contains { $0.contains(question) } }
        try h.keys("Y")  // only a lowercase y removes (README)
        lines = try await h.waitFor { !$0.contains { $0.contains("Remove ") } }
        // Y would have sent the removal before this frame was drawn: its reply (the row gone) follows.
        try h.keys("j", "k")
        lines = try await h.waitFor { H.cursorRow($0) == 2 }
        #expect(lines[2].contains(users[0].email), "Y kept the user on the list: \(lines)")
        #expect(try h.userctl(["show", users[0].id]).status == 0, "Y kept the user")
        try h.keys("d")
        _ = try await h.waitFor { $0.contains { $0.contains(question) } }
        try h.keys("y")
        lines = try await h.waitFor { !$0.contains { $0.contains(users[0].email) } && $0[2].contains(users[1].email) }
        #expect(!lines.contains { $0.contains(users[0].email) }, "y removed it from the list: \(lines)")
        #expect(try h.userctl(["show", users[0].id]).status == 65, "and from the store")

        // On a user's screen: d asks too, and y removes the user and goes back to the list.
        try h.keys("Enter")
        _ = try await h.waitFor { $0.contains { $0.contains("ID:       \(users[1].id)") } }
        try h.keys("d")
        lines = try await h.waitFor { $0.joined(separator: " ").contains("Remove \(users[1].name) (\(users[1].email))? y/N") }
        #expect(lines.joined(separator: " ").contains("Remove \(users[1].name)"), "\(lines)")
        try h.keys("y")
        lines = try await h.waitFor { $0[0].contains("· Users ") && !$0.contains { $0.contains(users[1].email) } }
        #expect(lines[0].contains("· Users "), "back on the list: \(lines)")
        #expect(try h.userctl(["show", users[1].id]).status == 65, "removed")

        // Both are recorded as made on a screen (`--via tui`), not by a one-shot command.
        let removals = try JSONValue(parsing: h.userctl(["history", "--kind", "removed", "--json"]).output).arrayValue
        #expect(removals?.count == 2 && removals?.allSatisfy { $0["via"] == "intent" } == true, "\(removals ?? [])")
        let viaTUI = try JSONValue(parsing: h.userctl(["history", "--via", "tui", "--kind", "removed", "--json"]).output)
        #expect(viaTUI.arrayValue?.count == 2, "history --via tui lists them: \(viaTUI)")
    }

    // MARK: 4. read-only

    /// A session of `nobody` (not root, not the daemon's user, not in the admin group): the user
    /// screen says read-only and takes no typing; `a` and `d` say why not, and never ask.
    @Test(.enabled(if: getuid() == 0, "needs root to run the TUI as nobody"))
    func aReadOnlySessionTakesNoEdits() async throws {
        let h = try H(columns: 100, rows: 30, command: H.readOnlyShell)
        defer { h.tearDown() }
        let users = try h.allUsers()
        var lines = try await h.startReadOnlyTUI()
        try #require(lines.last?.contains("(read-only)") == true, "a read-only session: \(lines)")

        try h.keys("a")
        lines = try await h.waitFor { $0[1].contains("read-only") }
        #expect(lines[1].contains("read-only") && lines[0].contains("· Users "), "a says why not: \(lines)")
        try h.keys("x")
        _ = try await h.waitFor { !$0[1].contains("read-only") }
        try h.keys("d")
        lines = try await h.waitFor { $0[1].contains("read-only") }
        #expect(lines[1].contains("cannot remove users"), "d says why not: \(lines)")
        let refusal = lines.joined(separator: " ")
        #expect(refusal.contains("usermod -aG") && refusal.contains("nobody"),
                "and which group to join, and how: \(lines)")
        #expect(!lines.contains { $0.contains("y/N") }, "and never asks: \(lines)")
        try h.keys("x")
        _ = try await h.waitFor { !$0[1].contains("read-only") }

        try h.keys("Enter")
        lines = try await h.waitFor { $0.contains { $0.contains("ID:       \(users[0].id)") } && $0[0].contains("read-only") }
        #expect(lines[0].contains("read-only"), "the header says so: \(lines)")
        #expect(lines.contains { $0.contains("read-only: this session can look but not change users") }, "\(lines)")
        #expect(!lines.contains { $0.contains("▏") }, "no field takes typing: \(lines)")
        try h.type("zz")
        try h.keys("Tab")
        try h.type("zz")
        try h.keys("C-s")
        lines = try await h.waitFor { $0[1].contains("cannot save changes") }
        #expect(lines[1].contains("read-only: it cannot save changes"), "Ctrl-S says why not: \(lines)")
        // The keys are handled in order: the screen that answers Ctrl-S shows what the typing
        // before it did.
        #expect(lines.contains { $0 == "  Name:     \(users[0].name)" } && !lines.joined().contains("zz"), "typing changed nothing: \(lines)")
        #expect(!lines.contains { $0.contains("modified") }, "nothing modified: \(lines)")
        try h.keys("Escape")  // dismisses the message
        _ = try await h.waitFor { !$0[1].contains("read-only") }
        try h.keys("Escape")
        lines = try await h.waitFor { $0[0].contains("· Users ") }
        #expect(lines[0].contains("· Users "), "Esc goes straight back, no unsaved question: \(lines)")
        #expect(try Self.show(h, users[0].id)["version"]?.int64Value == 1)
    }
}
