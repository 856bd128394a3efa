import UserListClient
import UserListWire

/// The list screen's keys and its cursor: moving, paging across loads, following the rows
/// that load above, and landing on the user just edited.
extension TUI {
    var listRows: Int { max(1, size.rows - 3 - listBannerRows) }

    func handleList(_ key: Key) -> Bool {
        let list = document.list
        let count = list?.rowCount ?? 0
        switch key {
        case .character("q"): return false
        case .character("?"): showingHelp = true; helpScroll = 0
        case .character("j"), .down: cursor += 1
        case .character("k"), .up: moveBackward(1)
        case .pageDown, .control("f"), .character(" "): moveForward(listRows)
        case .pageUp, .control("b"): moveBackward(listRows)
        case .character("g"), .home:
            cursor = 0
            // Back to the first page; a stale list is read again, so the first user is the true first.
            if list?.hasPrevious == true || list?.isStale == true {
                scroll = 0
                send("list", "refresh", then: .listReloaded)
            }
        case .character("G"), .end:
            if list?.hasMore == true {
                // One read of the last page, not a walk through every page before it.
                goingToEnd = true
                send("list", "show_last_page", then: .lastPageShown, otherwise: .lastPageFailed)
            } else {
                cursor = count - 1
            }
        case .enter:
            if count > 0 { send("list", "did_select_row", ["index": .int(Int64(cursor))]) }
        case .character("h"):
            // The user's screen, then, once it is open, its history above it; Esc on the
            // history goes back to the user's screen.
            if count > 0 { send("list", "did_select_row", ["index": .int(Int64(cursor))], then: .openedForHistory) }
        case .character("r"): send("list", "refresh", then: .listReloaded)
        case .character("a"): openNewUser()
        case .character("d"):
            if let user = list?.user(at: cursor) { askToRemove(user) }
        case .character("/"): searching = list?.search ?? ""
        case .character("x"): dismissBanner(screen: "list")
        case .escape:
            if banner != nil || list?.errorMessage != nil {
                dismissBanner(screen: "list")
            } else if let search = list?.search, !search.isEmpty {
                cursor = 0
                scroll = 0
                send("list", "search", ["text": .string("")], then: .listReloaded)
            }
        case .mouse(let event):
            switch event {
            case .wheelUp: moveBackward(3)
            case .wheelDown: moveForward(3)
            case .click(let row, _):
                let index = scroll + row - 2
                if row >= 2, row < 2 + listRows, index < count { cursor = index }
            }
        default: break
        }
        clampCursor()
        return true
    }

    /// `h`'s user screen is open (its reply may overtake its patch: the mirror has both).
    func openHistoryOfOpenedUser() {
        document = SessionDocument(client.document)
        guard document.showsDetail else { return }
        historyCursor = 0
        send("detail", "open_history")
    }

    /// Moves the cursor `rows` down; past the loaded rows it waits at the last one and goes on
    /// once the next page is in, so PgDn always moves a full screen.
    func moveForward(_ rows: Int) {
        let count = document.list?.rowCount ?? 0
        let target = cursor + rows
        if target > count - 1, document.list?.hasMore == true { seekTarget = target }
        cursor = target
    }

    /// After a list update: once the last page `G` asked for is in (the rows end the list),
    /// the cursor goes to its last row, in the same frame as the rows (so the top of the old
    /// scroll position is never reported as displayed, which would load the rows above).
    func followEnd() {
        guard goingToEnd, !document.showsDetail, let list = document.list,
              list.loading == ListScreen.Loading.none, !list.hasMore else { return }
        goingToEnd = false
        cursor = list.rowCount - 1
    }

    /// Moves the cursor `rows` up; above the first loaded row of a list opened at its end, it
    /// waits there and goes on once the rows above are in (`keepCursorOnItsRow`).
    func moveBackward(_ rows: Int) {
        let target = cursor - rows
        if target < 0, document.list?.hasPrevious == true { seekUp = -target }
        cursor = target
    }

    /// After a list update: move on towards the row a PgDn is waiting for.
    func followSeek() {
        guard let target = seekTarget, let list = document.list, !document.showsDetail else { return }
        cursor = min(target, list.rowCount - 1)
        if !list.hasMore || list.rowCount - 1 >= target { seekTarget = nil }
    }

    /// Rows loaded upward (a list opened at its end) arrive before the first row: move the
    /// cursor and the scroll by as many rows, so they stay on the users they were on.
    func keepCursorOnItsRow(before: ListScreen?) {
        guard let before, before.hasPrevious, let first = before.user(at: 0)?.id,
              let list = document.list, list.rowCount > before.rowCount,
              list.user(at: 0)?.id != first else { return }
        let added = list.rowCount - before.rowCount
        guard list.user(at: added)?.id == first else { return }
        cursor += added
        scroll += added
        let step = min(seekUp, cursor)
        cursor -= step
        seekUp = list.hasPrevious ? seekUp - step : 0
        firstDisplayedRow = -1
    }
}
