import UserListClient
import UserListWire

/// What the TUI's one queue carries (`TUI.feed`), and the questions it may have on screen.
extension TUI {
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
        /// A page read to find the user just left (`seekReturnedUser`) is in, or was refused.
        case returnedUserPage(loaded: Bool)
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
}
