import Foundation
import UserListDomain
import UserListPresentation
import UserListWire
import ThreadLocks

/// Presence (PROTOCOL.md §5.1): who else (in this daemon, or on another daemon sharing its
/// PostgreSQL database) has the detail screen's user open, and the list's markers of users
/// open elsewhere. Runs on the session's own executor only: the
/// session publishes its own presence on the `PresenceBoard` and reads the others' from it when
/// the board tells it (a job on its loop), and never touches another session.
extension Session {
    /// The name the others see: the login name of the session's uid, as its writes record it.
    var presenceName: String { useCases.author?.userName ?? "uid \(key.uid)" }

    /// Puts what this session shows on the board: the user of its detail screen (also under a
    /// history screen) while a client is attached, and whether its draft differs from the name.
    /// Only a change is published. Reading the others when its user changes keeps `present`
    /// about the user it shows.
    func publishPresence(_ state: NavigationState, shown: Bool) {
        // `sent` is what the last flush left (and `activity` says): the lock only on a change.
        let open = Self.openUser(in: state), before = sent.flatMap(Self.openUser(in:))
        if open?.user != before?.user || open?.draft != before?.draft { activity.withLock { $0.open = open } }
        guard let board = presenceBoard else { return }
        var shows: (user: UUID, editing: Bool)?
        if shown && !mode.isFinished, let open {
            shows = (open.user, open.draft)
        }
        guard shows?.user != published?.user || shows?.editing != published?.editing else { return }
        let userChanged = shows?.user != published?.user
        published = shows
        board.set(id, shows.map { ($0.user, PresenceBoard.Holder(name: presenceName, editing: $0.editing)) })
        if userChanged {
            presence.present = shows.map { SessionPresence.people(board.others(of: $0.user, seenBy: id).values) } ?? []
        }
    }

    /// The user of the detail screen (also under a history screen), and whether its draft
    /// differs from what is stored; a read-only person never edits.
    static func openUser(in state: NavigationState) -> (user: UUID, draft: Bool)? {
        let detail = state.screens.lazy.reversed().compactMap { screen -> UserDetailState? in
            if case .detail(let detail) = screen { detail } else { nil }
        }.first
        return detail.map { ($0.userID, $0.isDirty && !$0.isReadOnly) }
    }

    /// Someone else opened, closed, started or stopped editing `user` (a job on this session's
    /// loop): its marker and, if this session shows `user`, its `present` are read again.
    func presenceChanged(of user: UUID) {
        guard let board = presenceBoard, !mode.isFinished else { return }
        let others = board.others(of: user, seenBy: id)
        presence.setMarker(user, !others.isEmpty)
        if published?.user == user { presence.present = SessionPresence.people(others.values) }
        stateChanged()
    }

    /// Starts following presence (the session's screens start): every marker read once.
    func startPresence() {
        guard let board = presenceBoard else { return }
        board.watch(self)
        presence.setMarkers(board.openElsewhere(seenBy: id))
    }

    /// Clears what the clients show of presence before they are handed to the next process
    /// (which knows nothing of it), and leaves the board; `quietly` at a shutdown. Once, when
    /// the session finishes.
    func endPresence(quietly: Bool = false) {
        guard let board = presenceBoard else { return }
        presence.setMarkers([])
        board.leave(id, quietly: quietly)
        published = nil
        presence.present = []
    }

    /// `stateOps` (the screens' patch, serialized or empty) followed by presence's operations.
    func appendingPresenceOps(to stateOps: [UInt8], from previous: NavigationState,
                              to current: NavigationState) -> [UInt8] {
        guard presenceBoard != nil, !presence.patchIsEmpty(fromPresent: presentSent) else { return stateOps }
        var writer = PatchOperationsWriter(reservingCapacity: 64)
        presence.patch(fromPresent: presentSent, screens: previous, current, into: &writer)
        presentSent = presence.present
        guard !writer.isEmpty else { return stateOps }
        let ops = writer.finished()
        guard !stateOps.isEmpty else { return ops }
        return stateOps.dropLast() + [UInt8(ascii: ",")] + ops.dropFirst()
    }

    /// The state document the clients have, with presence (a snapshot, right after a flush).
    func document(_ state: NavigationState) -> JSONValue {
        let document = StateDocument.make(state)
        return presenceBoard == nil ? document : presence.adding(to: document)
    }
}
