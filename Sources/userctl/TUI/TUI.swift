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
/// of any length is one intent, and a draft the rate limit refused is sent again. While the
/// daemon is away typing goes on, on screen, and the draft is sent once reattached.
final class TUI {
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
    /// The user whose Ctrl-R re-create was asked (its id): while it is not stored again (or the
    /// create is refused), its screen is still that user's, not a "New user".
    var recreatedUserID: String?
    /// The field that typing edits on the user screen (Tab and Shift-Tab move it).
    var focusedField: DetailField = .name
    /// When each field of the open user last followed someone else's save ("just now").
    var followedAt: [DetailField: ContinuousClock.Instant] = [:]
    var draftsInFlight = 0
    var lastDraftSent = ContinuousClock.now - .seconds(1)
    var flushScheduled = false
    /// Ctrl-C: leaving without `bye`, once the daemon has the draft (`Detaching`).
    var detaching: Detaching?
    /// The user of the detail screen on top, so that back on the list the cursor is on them
    /// wherever a saved name sorted them.
    var detailUserID: String?
    /// Whether that user is stored (not removed, not a new user's unsaved screen).
    var detailUserIsStored = false
    /// Back from a user's screen whose row is not loaded: the user whose pages are being read,
    /// and whether a page for them is on its way (`TUI+ReturnedUser`). Any key stops it.
    var returnedUserToSeek: String?
    var seekingReturnedUser = false
    /// Pages read so far looking for it (`seekReturnedUser` gives up at `seekPageLimit`).
    var returnedUserPagesRead = 0
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

    /// Takes the server's drafts once every local edit has reached it.
    func syncDraft() {
        guard !draftUnsent, draftsInFlight == 0 else { return }
        drafts = [:]
    }

    /// Sends an intent; `then` is fed back once it succeeded, `otherwise` once it failed.
    func send(_ screen: String, _ action: String, _ args: [String: JSONValue]? = nil, then: Input? = nil,
              otherwise: Input? = nil) {
        let feed = self.feed
        // A list intent sent from a user's screen (`d`): the list's message is not on screen.
        let screenSaysIt = screen != "session" && !(screen == "list" && document.showsDetail)
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
               screenSaysIt {
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

    func draw() {
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
