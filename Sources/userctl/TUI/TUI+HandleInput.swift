import UserListClient
import UserListWire

/// What each input from the queue does to the view: keys go to the screen on top
/// (`TUI+KeyDispatch`), the client's updates refresh the document and the connection state,
/// and the replies the TUI asked to be told about finish what their key started.
extension TUI {
    /// Returns false to quit.
    func handle(_ input: Input) -> Bool {
        switch input {
        case .keys(let keys):
            for key in keys where !handle(key) { return false }
        case .update(let update): handle(update)
        case .endOfInput: return false
        case .intentFailed, .refusedWhileDisconnected, .tick, .resized: handleLocal(input)
        case .draftSent, .draftRefused, .flushDraft: handleDraftProgress(input)
        default: handleReply(input)
        }
        return true
    }

    private func handle(_ update: ClientUpdate) {
        switch update {
        case .state(let change):
            // The mirror's latest, not `change.document`: replies reach this loop by another
            // path than updates and may overtake them, so `.draftSent` already synced it.
            let before = document.list
            document = SessionDocument(client.document)
            keepCursorOnItsRow(before: before)
            followEnd()
            let now = ContinuousClock.now
            for id in change.editedUserIDs { highlights[id] = now }
            syncDraft()
            followSeek()
            clampCursor()
            seekReturnedUser()
        case .event(let event):
            if event.screen == "session", event.name == "changed", let id = event.payload["id"]?.stringValue {
                highlights[id] = .now
            }
        case .connection(let state): follow(state)
        case .serverError(let error):
            if error.code == .rateLimited, draftUnsent || draftsInFlight > 0 {
                unsentFields.formUnion(drafts.keys)
                scheduleDraftFlush()
            } else {
                banner = error.message
            }
        }
    }

    /// A drop keeps the unsaved edit as typed, and typing goes on meanwhile; once reattached,
    /// the edit reaches the daemon (`resumeDraft`).
    private func follow(_ state: ConnectionState) {
        let wasConnected = connection.isConnected
        connection = state
        if case .connected(let welcome) = state {
            reportExpiredDraft(welcome)
            if !wasConnected { askDaemonPID() }
        }
        if state.isConnected, bannerIsDisconnection {
            banner = nil
            bannerIsDisconnection = false
        }
        if state.isConnected, !wasConnected { resumeDraft() }
    }

    /// Once reattached: a draft the restored session lacks (the daemon lost it in a crash between
    /// two journal writes, or it was typed while away) is offered back whole, every changed field
    /// (`offer_draft`, which opens the user again if need be).
    private func resumeDraft() {
        document = SessionDocument(client.document)
        // The document as the drop left it: what was on screen while away.
        let before = SessionDocument(client.documentAtLastDrop)
        let typed = before.detail == nil ? [:] : drafts
        if let offer = DraftOffer.held(in: before, localDrafts: typed), offer.isMissing(from: document) {
            unsentFields.subtract(offer.fields.keys)
            draftsInFlight += 1  // the fields stay as typed until the daemon answers
            let feed = self.feed
            client.enqueue(screen: "session", action: "offer_draft", args: offer.arguments) { result in
                if case .failure(let error) = result { feed.yield(.intentFailed(error.message)) }
                feed.yield(.draftSent)
            }
        }
        flushDraft()
    }

    /// Messages, the clock and the terminal's size: nothing asked of the daemon.
    private func handleLocal(_ input: Input) {
        switch input {
        case .intentFailed(let message):
            banner = message
            bannerIsDisconnection = false
        case .refusedWhileDisconnected:
            // Typing on a user's screen is kept and sent once reconnected (the draft); a
            // command key is refused, with a word, rather than done later by surprise.
            banner = "Not connected (reconnecting): that key did nothing; try it again once connected."
            bannerIsDisconnection = true
        case .tick:
            spinner += 1
            let cutoff = ContinuousClock.now - .milliseconds(1500)
            highlights = highlights.filter { $0.value > cutoff }
        case .resized:
            size = Terminal.size()
            renderer.invalidate()
            clampCursor()  // fewer rows: scroll so the cursor's row stays on screen
        default: break
        }
    }

    /// The draft on its way to the daemon: sent, refused (sent again), or due.
    private func handleDraftProgress(_ input: Input) {
        switch input {
        case .draftSent:
            draftsInFlight = max(0, draftsInFlight - 1)
            if draftsInFlight == 0 {
                // The server sends an intent's patches before its reply, so the mirror already
                // holds the last draft; the `.update` carrying it may not have arrived here yet.
                document = SessionDocument(client.document)
                syncDraft()
                // Fields that waited for an offered name's screen to open (`resumeDraft`).
                if draftUnsent { scheduleDraftFlush() }
            }
        case .draftRefused:
            unsentFields.formUnion(drafts.keys)
            scheduleDraftFlush()
        case .flushDraft:
            flushScheduled = false
            flushDraft()
        default: break
        }
    }

    /// An intent's reply the TUI waited for: each finishes what its key started.
    private func handleReply(_ input: Input) {
        switch input {
        case .listReloaded:
            document = SessionDocument(client.document)
            if let id = reloadKeepsCursorOn, let list = document.list {
                reloadKeepsCursorOn = nil
                cursor = (0..<list.rowCount).first { list.user(at: $0)?.id == id } ?? cursor
            }
            clampCursor()
            lastDisplayedRow = -1  // the same row index may now be the end of a shorter list
            firstDisplayedRow = -1
        case .lastPageShown:
            document = SessionDocument(client.document)
            followEnd()
            clampCursor()
            lastDisplayedRow = -1
            firstDisplayedRow = -1
        case .lastPageFailed:
            goingToEnd = false
        case .savedThenBack:
            // The reply follows the save's patches, which the mirror already holds.
            document = SessionDocument(client.document)
            syncDraft()
            if document.showsDetail, !hasUnsavedChanges { leaveDetail() }
        case .openedForHistory: openHistoryOfOpenedUser()
        case .returnedUserPage(let loaded): followReturnedUserPage(loaded: loaded)
        case .removedThenBack(let userID):
            document = SessionDocument(client.document)
            if document.showsDetail, document.detail?.userID == userID { leaveDetail() }
        case .lastChange(let userID, let version, let entry):
            lastChange = (userID, version, entry)
        case .daemonPID(let pid):
            daemon.pid = pid
        default: break
        }
    }
}
