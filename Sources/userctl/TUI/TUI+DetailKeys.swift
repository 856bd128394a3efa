import Foundation
import UserListClient
import UserListWire

/// The user screen's keys and its draft: typed text is kept locally and sent whole, at most
/// every `draftInterval` and always before a save.
extension TUI {
    func handleDetail(_ key: Key) -> Bool {
        if prompt == .unsaved {
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
            return true
        }
        var text = draft ?? document.detail?.draftName ?? ""
        switch key {
        case .escape:
            if banner != nil || document.detail?.errorMessage != nil {
                dismissBanner(screen: "detail")
            } else if hasUnsavedChanges {
                prompt = .unsaved
            } else {
                leaveDetail()
            }
        case .enter, .control("s"):
            save(then: nil)
        case .character("h") where !hasUnsavedChanges, .control("o"):
            // `h` opens the history while the name is as stored; once it is changed, `h` types
            // (a name being edited gets every key that types). Ctrl-O opens it either way.
            historyCursor = 0
            flushDraft()  // the draft waits on the detail screen below the history
            send("detail", "open_history")
        case .backspace:
            guard !text.isEmpty else { return true }
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
        return true
    }

    /// Whether leaving now would lose an edit: the server's draft differs from the user, or a
    /// local edit has not reached it yet.
    var hasUnsavedChanges: Bool {
        guard let detail = document.detail, let user = detail.user else { return false }
        return detail.isDirty || (draft.map { $0 != user.name } ?? false)
    }

    func leaveDetail() {
        typedDraft = nil
        draft = nil
        draftUnsent = false
        send("detail", "back")
    }

    func save(then: Input?) {
        flushDraft()  // written before the save, so the save sees the whole draft
        send("detail", "save", then: then)
    }

    func setDraft(_ text: String) {
        typedDraft = document.detail.map { ($0.userID, text) }
        draft = text
        draftUnsent = true
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

    /// Sends the whole draft now, if the server does not have it yet.
    func flushDraft() {
        guard draftUnsent, let text = draft, document.showsDetail else { return }
        draftUnsent = false
        draftsInFlight += 1
        lastDraftSent = .now
        let feed = self.feed
        client.enqueue(screen: "detail", action: "set_draft_name", args: ["name": .string(text)]) { result in
            if case .failure(let error) = result {
                feed.yield(error.serverCode == .rateLimited ? .draftRefused : .intentFailed(error.message))
            }
            feed.yield(.draftSent)
        }
    }

    func dismissBanner(screen: String) {
        if banner != nil { banner = nil; return }
        send(screen, "dismiss_error")
    }
}
