import Foundation
import ThreadLocks

/// Who has which user open in this daemon's sessions, and whether they are editing it: the one
/// place sessions publish their presence, so that no session reads or writes another's state.
///
/// A session publishes on its own executor (`set`), and the board tells only the sessions whose
/// document can change, each through a job on its own loop (`Session.presenceChanged`), which
/// reads the board again there: a notification carries no state, so two of them arriving in
/// either order leave the same document. Sessions told:
/// - the others that have the same user open (their detail screen's `present`);
/// - every session, but only when the user goes from open nowhere else to open somewhere (or
///   back), the one moment a list's `open_elsewhere` changes for a session not holding it.
/// Each loop gets one job per publication, which tells its sessions in turn. So typing a draft
/// tells each other holder, and opening a user tells every session only when nobody had it
/// open; never a scan of every session per session.
///
/// Per daemon: sessions of another daemon on the same PostgreSQL database are not seen.
/// The lock is a leaf: nothing is called while it is held.
package final class PresenceBoard: Sendable {
    /// One session's presence: its uid's login name and whether its draft differs from the name.
    package struct Holder: Equatable, Sendable {
        package var name: String
        package var editing: Bool
    }

    private struct Watcher {
        let loop: EventLoop
        weak var session: Session?
    }

    private struct State {
        /// User id → session id → that session's presence.
        var holders: [UUID: [String: Holder]] = [:]
        /// Session id → the user it has open.
        var open: [String: UUID] = [:]
        /// Every running session, by id, told when a list's marker may change for it.
        var watchers: [String: Watcher] = [:]
    }

    private let state = Lock(State())

    package init() {}

    /// Starts telling `session` of presence changes (on its own loop).
    func watch(_ session: Session) {
        let watcher = Watcher(loop: session.loop, session: session)
        state.withLock { $0.watchers[session.id] = watcher }
    }

    /// Sets what session `id` has open (`nil`: nothing, or it detached or ended) and tells the
    /// sessions whose documents change.
    func set(_ id: String, _ presence: (user: UUID, holder: Holder)?) {
        let told = state.withLock { state -> [(Watcher, UUID)] in
            var changed: [(user: UUID, wasHeld: Bool)] = []
            if let previous = state.open[id], previous != presence?.user {
                state.holders[previous]?[id] = nil
                if state.holders[previous]?.isEmpty == true { state.holders[previous] = nil }
                state.open[id] = nil
                changed.append((previous, true))
            }
            if let presence, state.holders[presence.user]?[id] != presence.holder {
                let wasHeld = state.holders[presence.user] != nil
                state.holders[presence.user, default: [:]][id] = presence.holder
                state.open[id] = presence.user
                changed.append((presence.user, wasHeld))
            }
            var told: [(Watcher, UUID)] = []
            for (user, wasHeld) in changed {
                let isHeld = state.holders[user] != nil
                if wasHeld != isHeld {
                    // Open nowhere before, or nowhere now: every list's marker for it flips.
                    for (other, watcher) in state.watchers where other != id { told.append((watcher, user)) }
                } else {
                    // Only the other holders see a difference (their `present`, and their own
                    // marker when they were or are left alone with it).
                    for other in state.holders[user]?.keys ?? [:].keys where other != id {
                        if let watcher = state.watchers[other] { told.append((watcher, user)) }
                    }
                }
            }
            return told
        }
        // One job per loop, which tells each of its sessions in turn: a user opened where
        // nobody had it costs a job per loop (at most four), not one per session.
        var byLoop: [ObjectIdentifier: (loop: EventLoop, told: [(session: LoopChangeFeed.WeakSession, user: UUID)])] = [:]
        for (watcher, user) in told {
            byLoop[ObjectIdentifier(watcher.loop), default: (watcher.loop, [])].told.append((LoopChangeFeed.WeakSession(session: watcher.session), user))
        }
        for (loop, told) in byLoop.values {
            loop.execute {
                for (weak, user) in told {
                    weak.session?.assumeIsolated { $0.presenceChanged(of: user) }
                }
            }
        }
    }

    /// Stops telling `id` and takes its presence off (an ended session). `quietly`: nobody is
    /// told (the daemon is stopping and every session is told goodbye: a patch racing each
    /// goodbye would only make the clients' last documents differ run to run).
    func leave(_ id: String, quietly: Bool = false) {
        if quietly {
            state.withLock { state in
                if let user = state.open.removeValue(forKey: id) {
                    state.holders[user]?[id] = nil
                    if state.holders[user]?.isEmpty == true { state.holders[user] = nil }
                }
                state.watchers[id] = nil
            }
            return
        }
        set(id, nil)
        state.withLock { _ = $0.watchers.removeValue(forKey: id) }
    }

    /// The others who have `user` open, as `id` sees them.
    func others(of user: UUID, seenBy id: String) -> [String: Holder] {
        state.withLock { state in
            var holders = state.holders[user] ?? [:]
            holders[id] = nil
            return holders
        }
    }

    /// The users some session other than `id` has open (its list's markers): read once, when a
    /// session starts; after that each notification updates one user.
    func openElsewhere(seenBy id: String) -> Set<UUID> {
        state.withLock { state in
            var users = Set<UUID>()
            for (user, holders) in state.holders where holders.count > 1 || holders[id] == nil { users.insert(user) }
            return users
        }
    }
}
