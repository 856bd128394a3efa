import Foundation
import UserListClient
import UserListWire

/// The user screen's keys and its draft: typed text is kept locally, per field, and sent whole,
/// at most every `draftInterval` and always before a save. Tab and Shift-Tab move between the
/// fields; Ctrl-K and Ctrl-T settle a conflict; Ctrl-R creates a removed user again.
extension TUI {
    func handleDetail(_ key: Key) -> Bool {
        if prompt == .unsaved {
            answerUnsaved(key)
            return true
        }
        guard let detail = document.detail else {
            if key == .escape { leaveDetail() }
            return true
        }
        if detail.removal != nil, !detail.isNew { return handleRemoved(key, detail) }
        switch key {
        case .escape:
            if banner != nil || detail.errorMessage != nil {
                dismissBanner(screen: "detail")
            } else if hasUnsavedChanges {
                prompt = .unsaved
            } else {
                leaveDetail()
            }
        case .tab, .down: moveFocus(by: 1)
        case .backTab, .up: moveFocus(by: -1)
        case .enter, .control("s"):
            if detail.readOnly { return refuseReadOnly("save changes") }
            if detail.isNew && !hasUnsavedChanges {  // the daemon would save nothing, silently
                banner = "Nothing to save yet: type the new user's name, then Tab to the email."
                return true
            }
            save(then: nil)
        case .control("k"), .control("t"): settleConflict(keepingMine: key == .control("k"), detail)
        case .character("h") where commandLettersWork(detail), .control("o"):
            // `h` opens the history while nothing is changed and the name has the cursor; once
            // something is, or in the email or avatar field (a URL starts with h), `h` types.
            // Ctrl-O opens it either way.
            guard !detail.isNew else { return true }
            historyCursor = 0
            flushDraft()  // the draft waits on the detail screen below the history
            send("detail", "open_history")
        case .character("d") where commandLettersWork(detail) || (detail.readOnly && !detail.isNew), .control("d"):
            // `d` asks to remove this user as `h` opens the history (otherwise it types); Ctrl-D always.
            guard !detail.isNew, let user = detail.user else { return true }
            askToRemove(user)
        default:
            if !detail.readOnly { edit(key) }
        }
        return true
    }

    /// The "unsaved changes" question: s saves and goes back, d discards, k or Esc keeps editing.
    private func answerUnsaved(_ key: Key) {
        switch key {
        case .character("s"), .character("S"), .control("s"), .enter:
            prompt = nil
            save(then: .savedThenBack)
        case .character("d"), .character("D"):
            prompt = nil
            leaveDetail()
        case .character("k"), .character("K"), .escape:
            prompt = nil
        default: break
        }
    }

    /// A user removed by someone else: create it again, or discard the screen.
    private func handleRemoved(_ key: Key, _ detail: DetailScreen) -> Bool {
        switch key {
        case .control("r"):
            if detail.readOnly { return refuseReadOnly("create users") }
            recreatedUserID = detail.userID
            send("detail", "recreate")
            save(then: nil)
        case .escape:
            banner = nil
            leaveDetail()  // "Esc discard": the removal is the question, asked on screen
        default: break
        }
        return true
    }

    /// Ctrl-K / Ctrl-T: the conflict on the focused field, else the first one (the focus goes
    /// there).
    private func settleConflict(keepingMine: Bool, _ detail: DetailScreen) {
        guard let conflict = detail.conflict(on: focusedField) ?? detail.conflicts.first else { return }
        focusedField = conflict.field
        flushDraft()  // the choice applies to the draft as typed
        send("detail", keepingMine ? "keep_mine" : "take_theirs", ["field": .string(conflict.field.rawValue)])
    }

    /// Typing into the focused field: every key that types, pastes whole, and the deletions.
    private func edit(_ key: Key) {
        var text = fieldText(focusedField)
        switch key {
        case .backspace:
            guard !text.isEmpty else { return }
            text.removeLast()
            setDraft(text)
        case .control("u"): setDraft("")
        case .control("w"): setDraft(NameRules.deletingLastWord(text))
        case .character(let c):
            text.append(c)
            setDraft(text)
        case .paste(let pasted):
            setDraft(text + NameRules.pasted(pasted))
        default: break
        }
    }

    /// The text of `field` as shown: typed here and not yet echoed, else the daemon's draft.
    func fieldText(_ field: DetailField) -> String {
        drafts[field] ?? document.detail?.draft(field) ?? ""
    }

    func moveFocus(by step: Int) {
        let all = DetailField.allCases
        let index = all.firstIndex(of: focusedField) ?? 0
        focusedField = all[(index + step + all.count) % all.count]
    }

    /// Whether leaving now would lose an edit: the server's draft differs from the user, or a
    /// local edit has not reached it yet. Never on a read-only screen (it takes no edits).
    var hasUnsavedChanges: Bool {
        guard let detail = document.detail, !detail.readOnly, detail.user != nil || detail.isNew else { return false }
        return detail.isDirty || drafts.contains { $0.value != detail.stored($0.key) }
    }

    /// Whether `h` and `d` are commands rather than letters: on an untouched, stored user with
    /// the cursor in the name, where an edit rarely starts with a lowercase h or d. In the email
    /// and avatar fields they always type.
    func commandLettersWork(_ detail: DetailScreen) -> Bool {
        !hasUnsavedChanges && !detail.isNew && focusedField == .name
    }

    /// The session cannot write: say so instead of asking or editing, with the group that may
    /// (the welcome's `write_group`) and how to join it. Returns true (keep going).
    @discardableResult
    func refuseReadOnly(_ what: String) -> Bool {
        guard case .connected(let welcome) = connection, let group = welcome.writeGroup else {
            banner = "This session is read-only: it cannot \(what) (that needs root or the admin group)."
            return true
        }
        banner = "This session is read-only: it cannot \(what); that needs root or the group '\(group)'. "
            + "Ask an admin: usermod -aG \(group) \(DaemonLocator.loginName)"
        return true
    }

    /// Whether this session may only look (its welcome said so, or the open screen does).
    var sessionIsReadOnly: Bool {
        if document.showsDetail, let detail = document.detail { return detail.readOnly }
        if case .connected(let welcome) = connection { return welcome.access == .readOnly }
        return false
    }

    /// `d`: asks "Remove NAME (EMAIL)? y/N" (a read-only session says why it cannot instead).
    func askToRemove(_ user: UserRow) {
        if sessionIsReadOnly {
            refuseReadOnly("remove users")
            return
        }
        let label = DisplayWidth.sanitized(user.name) + " (" + DisplayWidth.sanitized(user.email) + ")"
        prompt = .remove(userID: user.id, label: label)
    }

    /// `y` to the question: removes the user; on its own screen, leaves it once removed. The
    /// list's intent, not the session's one-shot command, so history records it as the TUI's.
    func removeUser(_ id: String) {
        let onItsScreen = document.showsDetail && document.detail?.userID == id
        send("list", "remove_user", ["id": .string(id)], then: onItsScreen ? .removedThenBack(userID: id) : nil)
    }

    /// `a` on the list: an empty user screen whose save creates the user.
    func openNewUser() {
        if sessionIsReadOnly {
            refuseReadOnly("add users")
            return
        }
        send("session", "open_new_user")
    }

    /// After each input: fields that newly followed someone else's save are marked "just now"
    /// (`followedAt`); a field that no longer follows (typed into, saved) loses its mark.
    func noteFollowed() {
        guard document.showsDetail, let detail = document.detail else {
            followedAt = [:]
            return
        }
        let now = ContinuousClock.now
        for change in detail.followed where followedAt[change.field] == nil { followedAt[change.field] = now }
        followedAt = followedAt.filter { entry in detail.followed.contains { $0.field == entry.key } }
    }

    func leaveDetail() {
        drafts = [:]
        unsentFields = []
        followedAt = [:]
        send("detail", "back")
    }

    func save(then: Input?) {
        flushDraft()  // written before the save, so the save sees the whole draft
        send("detail", "save", then: then)
    }

    /// The focused field's new text, sent at most every `draftInterval`.
    func setDraft(_ text: String) {
        let field = focusedField
        drafts[field] = text
        unsentFields.insert(field)
        scheduleDraftFlush()
    }

    /// Sends the latest draft after at most `draftInterval` since the last one was sent.
    func scheduleDraftFlush() {
        guard !flushScheduled else { return }
        let wait = Self.draftInterval - (ContinuousClock.now - lastDraftSent)
        guard wait > .zero else { return flushDraft() }
        flushScheduled = true
        let feed = self.feed
        Task {
            try? await Task.sleep(for: wait)
            feed.yield(.flushDraft)
        }
    }

    /// Sends each field the server does not have yet, whole, now.
    /// While away, the draft waits as typed, on screen, and goes once reattached (`resumeDraft`).
    func flushDraft() {
        guard draftUnsent, document.showsDetail, connection.isConnected else { return }
        let fields = DetailField.allCases.filter(unsentFields.contains)
        unsentFields = []
        lastDraftSent = .now
        let feed = self.feed
        for field in fields {
            guard let text = drafts[field] else { continue }
            draftsInFlight += 1
            let (action, argument) = field.draftAction
            client.enqueue(screen: "detail", action: action, args: [argument: .string(text)]) { result in
                switch result {
                // Sent again: after the rate limit's pause, or once connected again.
                case .failure(let error) where error.serverCode == .rateLimited || error.kind == .disconnected:
                    feed.yield(.draftRefused)
                case .failure(let error): feed.yield(.intentFailed(error.message))
                case .success: break
                }
                feed.yield(.draftSent)
            }
        }
    }

    func dismissBanner(screen: String) {
        if banner != nil { banner = nil; return }
        send(screen, "dismiss_error")
    }
}
