import Dispatch
import Foundation
import Glibc
import UserListClient
import UserListWire

/// The interactive screen: a thin view over the session's state document.
///
/// Everything arrives as one queue of `Input`s (keys, state and connection updates, replies
/// that failed, ticks, resizes) handled on the main task, so the view state needs no locks; the
/// screen is drawn once per batch of inputs taken (`InputQueue`), however many came.
/// The server owns the screens; this view owns the cursor, scrolling, the search being typed,
/// the help overlay and prompts, and the draft being typed until the server has it.
///
/// Typed and pasted text is never lost: edits change a local draft, which is sent whole
/// (`set_draft_name`) at most every `draftInterval` and always right before a save, so a paste
/// of any length is one intent, and a draft the rate limit refused is sent again.
final class TUI {
    enum Input: Sendable {
        case keys([Key])
        case update(ClientUpdate)
        case intentFailed(String)
        /// A key's intent was not sent: the connection is down (reconnecting).
        case refusedWhileDisconnected
        case draftSent
        /// A draft was refused because the client sent too much: send the latest again.
        case draftRefused
        case flushDraft
        case tick
        case resized
        case endOfInput
        /// A refresh or search was answered: its first page is in the client's mirror.
        case listReloaded
        /// `show_last_page` was answered: the list's last page is in the client's mirror.
        case lastPageShown
        /// `show_last_page` failed (the list's error message says why): stop waiting for it.
        case lastPageFailed
        /// A save asked for by the "unsaved changes" prompt succeeded: leave the screen.
        case savedThenBack
        /// `h` on the list opened the user: now its history.
        case openedForHistory
        /// `d` on a user's screen removed that user: leave its screen.
        case removedThenBack(userID: String)
        /// The newest history entry of a user (for "changed by alice 3 min ago").
        case lastChange(userID: String, version: Int, entry: JSONValue?)
        /// The daemon said its pid (`askDaemonPID`), for the title line.
        case daemonPID(Int)
    }

    /// A question on screen: leaving a detail screen with unsaved changes, or removing a user
    /// (`d`: "Remove NAME (EMAIL)? y/N").
    enum Prompt: Equatable {
        case unsaved
        case remove(userID: String, label: String)
        /// `u` on a history entry whose undo removes or creates a user again: the question
        /// ("Undo #12: this removes NAME (EMAIL).") and the entry it undoes.
        case undo(entry: Int64, question: String)
    }

    static let draftInterval: Duration = .milliseconds(50)

    let client: UserListClient
    let mouse: Bool
    /// Every input, taken in batches: one draw per batch, never one per input (`InputQueue`).
    let feed = InputQueue<Input>()

    var document = SessionDocument(nil)
    var connection: ConnectionState = .connecting
    /// The daemon the screens are on, as the title line names it.
    var daemon: DaemonLabel
    var size = Terminal.size()
    var renderer = FrameRenderer()
    var cursor = 0
    var scroll = 0
    var searching: String?
    var banner: String?
    /// The banner says a key was refused while disconnected: it goes once reconnected.
    var bannerIsDisconnection = false
    /// Whether the note of an expired draft was looked for (`reportExpiredDraft`).
    var checkedKeptDraft = false
    var highlights: [String: ContinuousClock.Instant] = [:]
    var spinner = 0
    var lastDisplayedRow = -1
    var firstDisplayedRow = -1
    var showingHelp = false
    /// How far the help is scrolled (its first row on screen).
    var helpScroll = 0
    var prompt: Prompt?
    /// A row to move the cursor to once it is loaded (PgDn past the loaded rows).
    var seekTarget: Int?
    /// Rows still to move up once the rows above the first one are loaded (PgUp at the top of
    /// a list opened at its end).
    var seekUp = 0
    /// `G` asked for the list's last page; the cursor goes to its last row when it is in,
    /// unless another key came first.
    var goingToEnd = false

    // The draft as typed, per field, and how far the server has it: `drafts` holds the fields
    // typed here that the daemon may not have yet (the others are read from the document).
    var drafts: [DetailField: String] = [:]
    var unsentFields: Set<DetailField> = []
    var draftUnsent: Bool { !unsentFields.isEmpty }
    /// The field that typing edits on the user screen (Tab and Shift-Tab move it).
    var focusedField: DetailField = .name
    /// When each field of the open user last followed someone else's save ("just now").
    var followedAt: [DetailField: ContinuousClock.Instant] = [:]
    var draftsInFlight = 0
    var lastDraftSent = ContinuousClock.now - .seconds(1)
    var flushScheduled = false
    /// The unsaved edit held while reconnecting, offered back once reattached.
    var heldDraft: DraftOffer?
    /// The last text typed on a detail screen, and whose: ahead of the daemon until it has it.
    var typedDraft: (userID: String, text: String)?
    /// Ctrl-C: leaving without `bye`, once the daemon has the draft (`Detaching`).
    var detaching: Detaching?
    /// The user of the detail screen on top, so that back on the list the cursor is on them
    /// wherever a saved name sorted them.
    var detailUserID: String?
    /// A reload the TUI started by itself: the user the cursor stays on once it lands.
    var reloadKeepsCursorOn: String?
    /// The history screen's selected entry, and who changed the open user last (`TUI+History`).
    var historyCursor = 0
    var lastChange: (userID: String, version: Int, entry: JSONValue?)?

    init(client: UserListClient, mouse: Bool) {
        self.client = client
        self.mouse = mouse
        let socket = client.configuration.socketPath
        daemon = DaemonLabel(kind: DaemonLocator().kind(of: socket), socket: socket)
        document = SessionDocument(client.document)
        connection = client.connectionState
    }

    func run() async -> ExitCode {
        guard isatty(0) == 1, isatty(1) == 1 else {
            Console.err("userctl: the interactive screen needs a terminal; try 'userctl list' or 'userctl --help'")
            return .usage
        }
        guard Terminal.enter(mouse: mouse) else {
            Console.err("userctl: cannot put the terminal in raw mode")
            return .software
        }
        let sources = installSignalHandlers()
        startProducers()
        if case .connected(let welcome) = connection {
            reportExpiredDraft(welcome)
            askDaemonPID()
        }
        draw()
        running: for await _ in feed.wakes {
            for input in feed.takeAll() {
                if !handle(input) || detaching?.isDone(self) == true { break running }
                followReturnedUser()
                noteFollowed()
            }
            draw()
        }
        sources.forEach { $0.cancel() }
        Terminal.restore()
        if let detaching { detach(detaching) }
        return .ok
    }

    // MARK: producers

    private func installSignalHandlers() -> [any DispatchSourceSignal] {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                Terminal.restore()
                exit(number == SIGINT ? 130 : 128 + number)
            }
            source.resume()
            sources.append(source)
        }
        signal(SIGWINCH, SIG_IGN)
        let resize = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: .global())
        let feed = self.feed
        resize.setEventHandler { feed.yield(.resized) }
        resize.resume()
        sources.append(resize)
        return sources
    }

    private func startProducers() {
        let feed = self.feed
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            var decoder = KeyDecoder()
            while true {
                let n = read(0, &buffer, buffer.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { feed.yield(.endOfInput); return }
                let keys = decoder.decode(Array(buffer[0..<n]))
                if !keys.isEmpty { feed.yield(.keys(keys)) }
            }
        }
        reader.start()
        let client = self.client
        Task {
            for await update in client.updates { feed.yield(.update(update)) }
        }
        Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(120))
                feed.yield(.tick)
            }
        }
    }

    // MARK: handling

    /// Returns false to quit.
    private func handle(_ input: Input) -> Bool {
        switch input {
        case .keys(let keys):
            for key in keys where !handle(key) { return false }
        case .update(let update):
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
            case .event(let event):
                if event.screen == "session", event.name == "changed", let id = event.payload["id"]?.stringValue {
                    highlights[id] = .now
                }
            case .connection(let state):
                // A drop: keep the unsaved edit as typed; once reattached, offer it back if the
                // daemon lost it (killed between two of its journal writes).
                if case .reconnecting = state, connection.isConnected {
                    // The document as the drop left it (this loop's copy may already be newer).
                    let before = SessionDocument(client.documentAtLastDrop)
                    let typed = typedDraft.flatMap { $0.userID == before.detail?.userID ? $0.text : nil }
                    heldDraft = DraftOffer.held(in: before, localDraft: typed)
                }
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
                if state.isConnected, let offer = heldDraft {
                    heldDraft = nil
                    document = SessionDocument(client.document)
                    if offer.isMissing(from: document) {
                        drafts = [:]
                        unsentFields = []
                        typedDraft = nil
                        send("session", "offer_draft", offer.arguments)
                    }
                }
            case .serverError(let error):
                if error.code == .rateLimited, draftUnsent || draftsInFlight > 0 {
                    unsentFields.formUnion(drafts.keys)
                    scheduleDraftFlush()
                } else {
                    banner = error.message
                }
            }
        case .intentFailed(let message):
            banner = message
            bannerIsDisconnection = false
        case .refusedWhileDisconnected:
            // Typing on a user's screen is kept and sent once reconnected (the draft); a
            // command key is refused, with a word, rather than done later by surprise.
            banner = "Not connected (reconnecting): that key did nothing; try it again once connected."
            bannerIsDisconnection = true
        case .draftSent:
            draftsInFlight = max(0, draftsInFlight - 1)
            if draftsInFlight == 0 {
                // The server sends an intent's patches before its reply, so the mirror already
                // holds the last draft; the `.update` carrying it may not have arrived here yet.
                document = SessionDocument(client.document)
                syncDraft()
            }
        case .draftRefused:
            unsentFields.formUnion(drafts.keys)
            scheduleDraftFlush()
        case .flushDraft:
            flushScheduled = false
            flushDraft()
        case .tick:
            spinner += 1
            let cutoff = ContinuousClock.now - .milliseconds(1500)
            highlights = highlights.filter { $0.value > cutoff }
        case .resized:
            size = Terminal.size()
            renderer.invalidate()
            clampCursor()  // fewer rows: scroll so the cursor's row stays on screen
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
        case .removedThenBack(let userID):
            document = SessionDocument(client.document)
            if document.showsDetail, document.detail?.userID == userID { leaveDetail() }
        case .lastChange(let userID, let version, let entry):
            lastChange = (userID, version, entry)
        case .daemonPID(let pid):
            daemon.pid = pid
        case .endOfInput:
            return false
        }
        return true
    }

    /// Takes the server's drafts once every local edit has reached it.
    func syncDraft() {
        guard !draftUnsent, draftsInFlight == 0 else { return }
        drafts = [:]
    }

    private func handle(_ key: Key) -> Bool {
        if key == .control("c") { return startDetaching() }
        if detaching != nil { return true }  // leaving: keys no longer edit
        if showingHelp {
            // j/k, arrows and PgUp/PgDn scroll the help; any other key closes it.
            let page = max(1, size.rows - 4)
            switch key {
            case .character("j"), .down: helpScroll += 1
            case .character("k"), .up: helpScroll = max(0, helpScroll - 1)
            case .pageDown, .character(" "), .control("f"): helpScroll += page
            case .pageUp, .control("b"): helpScroll = max(0, helpScroll - page)
            default: showingHelp = false
            }
            return true
        }
        if key == .f1 { showingHelp = true; helpScroll = 0; return true }
        if case .remove(let id, _) = prompt {
            // Only y removes; any other key (n, Enter, Esc...) keeps the user.
            prompt = nil
            if key == .character("y") || key == .character("Y") { removeUser(id) }
            return true
        }
        if case .undo(let entry, _) = prompt {
            // Only y undoes; any other key leaves the user as they are.
            prompt = nil
            if key == .character("y") || key == .character("Y") { send("history", "revert", ["entry": .int(entry)]) }
            return true
        }
        if seekTarget != nil || seekUp > 0, !document.showsDetail {
            seekTarget = nil  // any key stops a PgDn or PgUp waiting for its page, and then does its own job
            seekUp = 0
        }
        if goingToEnd, !document.showsDetail {
            goingToEnd = false  // the key's own job wins over the jump still on its way
            if key == .character("G") || key == .end || key == .escape { return true }
            if key == .character("g") || key == .home {
                // The last page may land after this key: go back to the first page for sure.
                cursor = 0
                scroll = 0
                send("list", "refresh", then: .listReloaded)
                return true
            }
        }
        if var text = searching {
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
            return true
        }
        if document.showsHistory { return handleHistory(key) }
        if document.showsDetail { return handleDetail(key) }
        return handleList(key)
    }

    /// Sends an intent; `then` is fed back once it succeeded, `otherwise` once it failed.
    func send(_ screen: String, _ action: String, _ args: [String: JSONValue]? = nil, then: Input? = nil,
              otherwise: Input? = nil) {
        let feed = self.feed
        // Written now, in key order; the reply comes back through the input stream.
        client.enqueue(screen: screen, action: action, args: args) { result in
            guard case .failure(let error) = result else {
                if let then { feed.yield(then) }
                return
            }
            if let otherwise { feed.yield(otherwise) }
            if error.kind == .disconnected {
                feed.yield(.refusedWhileDisconnected)
                return
            }
            // Failed loads and saves also show in the screen's own error_message; say it once.
            if case .server(let code) = error.kind, [.unavailable, .validation, .conflict, .notFound].contains(code),
               screen != "session" {
                return
            }
            feed.yield(.intentFailed(error.message))
        }
    }

    func clampCursor() {
        let count = document.list?.rowCount ?? 0
        cursor = max(0, min(cursor, count - 1))
        if cursor < scroll { scroll = cursor }
        if cursor >= scroll + listRows { scroll = cursor - listRows + 1 }
        scroll = max(0, min(scroll, max(0, count - listRows)))
    }

    // MARK: drawing

    private func draw() {
        var lines = document.showsHistory ? historyLines() : document.showsDetail ? detailLines() : listLines()
        if showingHelp { lines = helpLines() }
        Terminal.draw(renderer.render(lines, width: size.columns))
        if !document.showsDetail && !document.showsHistory { reportLastVisibleRow() }
    }

    /// Tells the list which row is the last one on screen, so it loads the next page in time.
    ///
    /// Said again after every load seen, and after a refresh or search is answered: the list
    /// ignores the report while it is loading, and a reload can bring back a list whose last
    /// visible row has the same index (the cursor on the last row of the first page), which
    /// must still fetch the next page.
    /// The first visible row is reported likewise while rows come before it (`has_previous`),
    /// so scrolling up from the list's end loads the pages above.
    private func reportLastVisibleRow() {
        guard let list = document.list, list.rowCount > 0, list.loading == ListScreen.Loading.none else {
            lastDisplayedRow = -1
            firstDisplayedRow = -1
            return
        }
        let last = min(list.rowCount, scroll + listRows) - 1
        if last != lastDisplayedRow {
            lastDisplayedRow = last
            if list.hasMore { send("list", "did_display_row", ["index": .int(Int64(last))]) }
        }
        if list.hasPrevious, scroll != firstDisplayedRow {
            firstDisplayedRow = scroll
            send("list", "did_display_row", ["index": .int(Int64(scroll))])
        }
    }
}
