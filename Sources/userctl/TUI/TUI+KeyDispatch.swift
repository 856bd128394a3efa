import UserListClient
import UserListWire

/// Where a key goes: Ctrl-C always leaves; the help, a question on screen, a jump still on its
/// way and the search being typed take keys before the screen on top does (list, user, history).
extension TUI {
    /// Returns false to quit.
    func handle(_ key: Key) -> Bool {
        if key == .control("c") { return startDetaching() }
        if detaching != nil { return true }  // leaving: keys no longer edit
        if showingHelp {
            handleHelp(key)
            return true
        }
        if key == .f1 {
            showingHelp = true
            helpScroll = 0
            return true
        }
        if answerPrompt(key) { return true }
        returnedUserToSeek = nil  // a key's own job wins over finding the user just left
        if seekTarget != nil || seekUp > 0, !document.showsDetail {
            seekTarget = nil  // any key stops a PgDn or PgUp waiting for its page, and then does its own job
            seekUp = 0
        }
        if goingToEnd, !document.showsDetail, interruptGoingToEnd(key) { return true }
        if let text = searching {
            handleSearch(key, text)
            return true
        }
        if document.showsHistory { return handleHistory(key) }
        if document.showsDetail { return handleDetail(key) }
        return handleList(key)
    }

    /// j/k, arrows and PgUp/PgDn scroll the help; any other key closes it.
    private func handleHelp(_ key: Key) {
        let page = max(1, size.rows - 4)
        switch key {
        case .character("j"), .down: helpScroll += 1
        case .character("k"), .up: helpScroll = max(0, helpScroll - 1)
        case .pageDown, .character(" "), .control("f"): helpScroll += page
        case .pageUp, .control("b"): helpScroll = max(0, helpScroll - page)
        default: showingHelp = false
        }
    }

    /// A remove or undo question takes the next key: only a lowercase y does it (as README and
    /// the "y/N" say), any other key (Y, n, Enter, Esc...) leaves things as they are. Returns
    /// whether there was a question.
    private func answerPrompt(_ key: Key) -> Bool {
        let yes = key == .character("y")
        switch prompt {
        case .remove(let id, _):
            prompt = nil
            if yes { removeUser(id) }
        case .undo(let entry, _):
            prompt = nil
            if yes { send("history", "revert", ["entry": .int(entry)]) }
        default: return false
        }
        return true
    }

    /// A key while `G` waits for the last page: its own job wins over the jump. Returns whether
    /// the key is done (G, End, Esc: nothing more; g, Home: back to the first page for sure).
    private func interruptGoingToEnd(_ key: Key) -> Bool {
        goingToEnd = false
        if key == .character("G") || key == .end || key == .escape { return true }
        guard key == .character("g") || key == .home else { return false }
        // The last page may land after this key: go back to the first page for sure.
        cursor = 0
        scroll = 0
        send("list", "refresh", then: .listReloaded)
        return true
    }

    /// The search being typed: Enter applies it, Esc cancels.
    private func handleSearch(_ key: Key, _ typed: String) {
        var text = typed
        switch key {
        case .enter:
            searching = nil
            cursor = 0
            scroll = 0
            send("list", "search", ["text": .string(text)], then: .listReloaded)
        case .escape: searching = nil
        case .backspace: if !text.isEmpty { text.removeLast() }
        case .control("u"): text = ""
        case .control("w"): text = NameRules.deletingLastWord(text)
        case .character(let c): text.append(c)
        case .paste(let pasted): text += NameRules.pasted(pasted)
        default: break
        }
        if searching != nil { searching = text }
    }
}
