import Dispatch
import Foundation
import Glibc
import UserListClient
import UserListWire

/// The interactive screen: a thin view over the session's state document.
///
/// Everything arrives as one stream of `Input`s (keys, state and connection updates, replies
/// that failed, ticks, resizes) handled on the main task, so the view state needs no locks.
/// The server owns the screens; this view owns only the cursor, scrolling, the search being
/// typed and the draft keystrokes not yet echoed back.
final class TUI {
    enum Input: Sendable {
        case keys([Key])
        case update(ClientUpdate)
        case intentFailed(String)
        case draftSent
        case tick
        case resized
        case endOfInput
        /// A refresh or search was answered: its first page is in the client's mirror.
        case listReloaded
    }

    private let client: UserListClient
    private let inputs: AsyncStream<Input>
    private let feed: AsyncStream<Input>.Continuation

    private var document = SessionDocument(nil)
    private var connection: ConnectionState = .connecting
    private var size = Terminal.size()
    private var renderer = FrameRenderer()
    private var cursor = 0
    private var scroll = 0
    private var searching: String?
    private var banner: String?
    private var draft: String?
    private var draftsInFlight = 0
    private var highlights: [String: ContinuousClock.Instant] = [:]
    private var spinner = 0
    private var lastDisplayedRow = -1

    init(client: UserListClient) {
        self.client = client
        (inputs, feed) = AsyncStream.makeStream(of: Input.self)
        document = SessionDocument(client.document)
        connection = client.connectionState
    }

    func run() async -> ExitCode {
        guard isatty(0) == 1, isatty(1) == 1 else {
            Console.err("userctl: the interactive screen needs a terminal; try 'userctl list' or 'userctl --help'")
            return .usage
        }
        guard Terminal.enter() else {
            Console.err("userctl: cannot put the terminal in raw mode")
            return .software
        }
        let sources = installSignalHandlers()
        startProducers()
        defer {
            sources.forEach { $0.cancel() }
            Terminal.restore()
        }
        draw()
        for await input in inputs {
            if !handle(input) { break }
            draw()
        }
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
            var buffer = [UInt8](repeating: 0, count: 1024)
            while true {
                let n = read(0, &buffer, buffer.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { feed.yield(.endOfInput); return }
                feed.yield(.keys(KeyDecoder.decode(Array(buffer[0..<n]))))
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
                document = SessionDocument(client.document)
                let now = ContinuousClock.now
                for id in change.editedUserIDs { highlights[id] = now }
                if draftsInFlight == 0 { draft = document.detail?.draftName }
                clampCursor()
            case .event(let event):
                if event.screen == "session", event.name == "changed", let id = event.payload["id"]?.stringValue {
                    highlights[id] = .now
                }
            case .connection(let state):
                connection = state
            case .serverError(let error):
                banner = error.message
            }
        case .intentFailed(let message):
            banner = message
        case .draftSent:
            draftsInFlight = max(0, draftsInFlight - 1)
            if draftsInFlight == 0 {
                // The server sends an intent's patches before its reply, so the mirror already
                // holds the last draft; the `.update` carrying it may not have arrived here yet.
                document = SessionDocument(client.document)
                draft = document.detail?.draftName
            }
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
            clampCursor()
            lastDisplayedRow = -1  // the same row index may now be the end of a shorter list
        case .endOfInput:
            return false
        }
        return true
    }

    private func handle(_ key: Key) -> Bool {
        if key == .control("c") { return false }
        if var text = searching {
            switch key {
            case .enter:
                searching = nil
                cursor = 0
                scroll = 0
                send("list", "search", ["text": .string(text)], then: .listReloaded)
            case .escape: searching = nil
            case .backspace: if !text.isEmpty { text.removeLast() }; searching = text
            case .character(let c): text.append(c); searching = text
            default: break
            }
            if searching != nil { searching = text }
            return true
        }
        if document.showsDetail { return handleDetail(key) }
        return handleList(key)
    }

    private var listRows: Int { max(1, size.rows - 4) }

    private func handleList(_ key: Key) -> Bool {
        let count = document.list?.users.count ?? 0
        switch key {
        case .character("q"): return false
        case .character("j"), .down: cursor += 1
        case .character("k"), .up: cursor -= 1
        case .pageDown, .control("f"): cursor += listRows
        case .pageUp, .control("b"): cursor -= listRows
        case .character("g"), .home: cursor = 0
        case .character("G"), .end: cursor = count - 1
        case .enter:
            if count > 0 { send("list", "did_select_row", ["index": .int(Int64(cursor))]) }
        case .character("r"): send("list", "refresh", then: .listReloaded)
        case .character("/"): searching = document.list?.search ?? ""
        case .character("x"), .escape: dismissBanner(screen: "list")
        default: break
        }
        clampCursor()
        return true
    }

    private func handleDetail(_ key: Key) -> Bool {
        var text = draft ?? document.detail?.draftName ?? ""
        switch key {
        case .escape:
            if banner != nil || document.detail?.errorMessage != nil {
                dismissBanner(screen: "detail")
            } else {
                draft = nil
                send("detail", "back")
            }
        case .enter, .control("s"):
            send("detail", "save")
        case .backspace:
            guard !text.isEmpty else { return true }
            text.removeLast()
            setDraft(text)
        case .character(let c):
            text.append(c)
            setDraft(text)
        default: break
        }
        return true
    }

    private func setDraft(_ text: String) {
        draft = text
        draftsInFlight += 1
        let feed = self.feed
        client.enqueue(screen: "detail", action: "set_draft_name", args: ["name": .string(text)]) { result in
            if case .failure(let error) = result { feed.yield(.intentFailed(error.message)) }
            feed.yield(.draftSent)
        }
    }

    private func dismissBanner(screen: String) {
        if banner != nil { banner = nil; return }
        send(screen, "dismiss_error")
    }

    /// Sends an intent; `then` is fed back once it succeeded.
    private func send(_ screen: String, _ action: String, _ args: [String: JSONValue]? = nil, then: Input? = nil) {
        let feed = self.feed
        // Written now, in key order; the reply comes back through the input stream.
        client.enqueue(screen: screen, action: action, args: args) { result in
            guard case .failure(let error) = result else {
                if let then { feed.yield(then) }
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

    private func clampCursor() {
        let count = document.list?.users.count ?? 0
        cursor = max(0, min(cursor, count - 1))
        if cursor < scroll { scroll = cursor }
        if cursor >= scroll + listRows { scroll = cursor - listRows + 1 }
        scroll = max(0, min(scroll, max(0, count - listRows)))
    }

    // MARK: drawing

    private func draw() {
        let lines = document.showsDetail ? detailLines() : listLines()
        Terminal.draw(renderer.render(lines, width: size.columns))
        if !document.showsDetail { reportLastVisibleRow() }
    }

    /// Tells the list which row is the last one on screen, so it loads the next page in time.
    ///
    /// Said again after every load seen, and after a refresh or search is answered: the list
    /// ignores the report while it is loading, and a reload can bring back a list whose last
    /// visible row has the same index (the cursor on the last row of the first page), which
    /// must still fetch the next page.
    private func reportLastVisibleRow() {
        guard let list = document.list, !list.users.isEmpty, list.loading == ListScreen.Loading.none else {
            lastDisplayedRow = -1
            return
        }
        let last = min(list.users.count, scroll + listRows) - 1
        guard last != lastDisplayedRow else { return }
        lastDisplayedRow = last
        if list.hasMore { send("list", "did_display_row", ["index": .int(Int64(last))]) }
    }

    private func header(_ title: String) -> Line {
        Line(" userctl · " + title, .boldReverse)
    }

    private func bannerLine(_ screenError: String?) -> Line {
        if let message = banner ?? screenError { return Line(" ⚠ \(message)  (x/Esc to dismiss)", .error) }
        return Line("")
    }

    private func statusLine() -> Line {
        let state: String
        switch connection {
        case .connected(let welcome): state = "● connected" + (welcome.access == .readOnly ? " (read-only)" : "")
        case .connecting: state = "○ connecting…"
        case .reconnecting(let attempt): state = "○ reconnecting… (attempt \(attempt))"
        case .closed(let reason): state = "✕ disconnected: \(reason)"
        }
        return Line(" \(state)   session \(client.configuration.sessionKey)", .reverse)
    }

    private static let spinnerFrames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

    private func listLines() -> [Line] {
        let rows = size.rows
        let list = document.list
        let users = list?.users ?? []
        var title = "Users"
        if let total = list?.totalCount { title += " (\(users.count) of \(total))" } else { title += " (\(users.count))" }
        if let search = list?.search { title += "  search: \(search)" }
        if list?.isStale == true { title += "  [stale]" }
        var lines = [header(title), bannerLine(list?.errorMessage)]
        let nameWidth = max(10, min(40, (size.columns - 4) / 2))
        let emailWidth = max(0, size.columns - nameWidth - 6)
        if list?.loading == .fullScreen && users.isEmpty {
            for index in 0..<listRows {
                lines.append(index == listRows / 2
                             ? Line(String(repeating: " ", count: max(0, size.columns / 2 - 6)) + Self.spinnerFrames[spinner % 10] + " loading…")
                             : Line(""))
            }
        } else {
            let now = ContinuousClock.now
            for row in 0..<listRows {
                let index = scroll + row
                guard index < users.count else { lines.append(Line(index == 0 ? "  (no users)" : "", .dim)); continue }
                let user = users[index]
                let text = (index == cursor ? "▸ " : "  ") + DisplayWidth.pad(user.name, to: nameWidth) + "  " + DisplayWidth.truncate(user.email, to: emailWidth)
                let highlighted = highlights[user.id].map { now - $0 < .milliseconds(1500) } ?? false
                lines.append(Line(text, highlighted ? .reverse : index == cursor ? .bold : .plain))
            }
        }
        if let search = searching {
            lines.append(Line("/" + search + "▏  (Enter applies, Esc cancels)", .bold))
        } else if list?.loading == .nextPage {
            lines.append(Line("  \(Self.spinnerFrames[spinner % 10]) loading more…", .dim))
        } else if list?.loading == .fullScreen {
            lines.append(Line("  \(Self.spinnerFrames[spinner % 10]) loading…", .dim))
        } else {
            lines.append(Line("  j/k move · Enter open · r refresh · / search · q quit", .dim))
        }
        lines.append(statusLine())
        return Array(lines.prefix(rows)) + Array(repeating: Line(""), count: max(0, rows - lines.count))
    }

    private func detailLines() -> [Line] {
        let rows = size.rows
        let detail = document.detail
        let shownDraft = draftsInFlight > 0 ? (draft ?? "") : (detail?.draftName ?? "")
        var lines = [header("User" + (detail?.user.map { ": \($0.name)" } ?? "")), bannerLine(detail?.errorMessage)]
        if let user = detail?.user {
            lines.append(Line(""))
            lines.append(Line("  Name:     " + shownDraft + "▏", .bold))
            lines.append(Line("  Email:    " + user.email))
            lines.append(Line("  Avatar:   " + (user.avatarURL ?? "-")))
            lines.append(Line("  ID:       " + user.id, .dim))
            lines.append(Line("  Version:  \(user.version)", .dim))
            lines.append(Line(""))
            if detail?.isSaving == true {
                lines.append(Line("  \(Self.spinnerFrames[spinner % 10]) saving…"))
            } else if detail?.isDirty == true {
                lines.append(Line(detail?.canSave == true ? "  modified: Enter or Ctrl-S saves" : "  modified (cannot be saved as is)"))
            }
            if let conflict = detail?.conflict {
                lines.append(Line("  Someone else saved first: now \"\(conflict.name)\" (version \(conflict.version)).", .bold))
            }
        } else {
            lines.append(Line(""))
            lines.append(Line("  \(Self.spinnerFrames[spinner % 10]) loading…"))
        }
        while lines.count < rows - 2 { lines.append(Line("")) }
        lines = Array(lines.prefix(max(0, rows - 2)))
        lines.append(Line("  type to edit the name · Backspace deletes · Enter/Ctrl-S save · Esc back", .dim))
        lines.append(statusLine())
        return Array(lines.prefix(rows))
    }
}
