import UserListClient
import UserListWire

/// Back from a user's screen the cursor is on that user, wherever a saved name (or a new
/// user's) sorted them: among the loaded rows at once, else once the pages that hold them are
/// read (those after the loaded rows first, then those before), as PgDn would read them.
extension TUI {
    /// While a user's screen is on top, remembers whose; back on the list, puts the cursor on
    /// that user's row, or starts reading pages towards it.
    func followReturnedUser() {
        if document.showsDetail {
            if document.detail?.userID != detailUserID {
                focusedField = .name  // another user's screen (or a new one): typing starts at the name
                followedAt = [:]
            }
            detailUserID = document.detail?.userID
            // Only a stored user is looked for: a removed one is on no page.
            detailUserIsStored = document.detail.map { $0.user != nil && $0.removal == nil } ?? false
            return
        }
        guard let id = detailUserID, let list = document.list else { return }
        detailUserID = nil
        guard let index = list.index(of: id) else {
            if detailUserIsStored, !document.showsHistory {
                returnedUserToSeek = id
                returnedUserPagesRead = 0
                seekReturnedUser()
            }
            return
        }
        cursor = index
        clampCursor()
        // Back on a stale list whose first page is on screen: read it again (the cursor stays
        // on this user), so `[stale]` does not linger until `r`. Deeper down a reload would
        // drop the pages read, so there it waits for `r` or `g`.
        if list.isStale, !list.hasPrevious, cursor < listRows, list.loading == ListScreen.Loading.none {
            reloadKeepsCursorOn = id
            send("list", "refresh", then: .listReloaded)
        }
    }

    /// One step towards the user sought: the cursor goes to their row once it is loaded, else
    /// the next page is asked for (its reply comes after the page: `.returnedUserPage`). A list
    /// still loading is left to finish; its state update calls this again.
    func seekReturnedUser() {
        guard let id = returnedUserToSeek, !seekingReturnedUser else { return }
        guard let list = document.list, !document.showsDetail, !document.showsHistory else {
            returnedUserToSeek = nil
            return
        }
        if let index = list.index(of: id) {
            returnedUserToSeek = nil
            cursor = index
            clampCursor()
            return
        }
        guard list.loading == ListScreen.Loading.none else { return }
        // The rows after the loaded ones first (a saved name usually moves down the list).
        guard list.hasMore || list.hasPrevious, list.rowCount > 0 else {
            returnedUserToSeek = nil
            return
        }
        // A few pages at most: a name saved to the far end of a large list is not worth reading
        // (and keeping) every page in between; the person is told how to get there instead.
        guard returnedUserPagesRead < Self.seekPageLimit else {
            returnedUserToSeek = nil
            banner = "The user you left sorts further down the list: / and part of the name finds them, "
                + "G goes to the end."
            return
        }
        returnedUserPagesRead += 1
        let row = list.hasMore ? list.rowCount - 1 : 0
        seekingReturnedUser = true
        send("list", "did_display_row", ["index": .int(Int64(row))],
             then: .returnedUserPage(loaded: true), otherwise: .returnedUserPage(loaded: false))
    }

    /// How many pages back on the list are read looking for the user just left.
    static let seekPageLimit = 10

    /// A page asked for by `seekReturnedUser` is in (or was refused: then the search stops).
    func followReturnedUserPage(loaded: Bool) {
        seekingReturnedUser = false
        if !loaded { returnedUserToSeek = nil }
        document = SessionDocument(client.document)
        seekReturnedUser()
    }
}

extension ListScreen {
    /// The loaded row of the user `id`, if any.
    func index(of id: String) -> Int? { (0..<rowCount).first { user(at: $0)?.id == id } }
}
