import Foundation
import ThreadLocks
import UserListDomain

/// Who has which user open, and whether they are editing it: this daemon's sessions, and the
/// people of the other daemons sharing the store (PostgreSQL), as they announce them. The one
/// place sessions publish their presence, so that no session reads or writes another's state.
///
/// A session publishes on its own executor (`set`); another daemon's announcement arrives on
/// the relay's thread (`receive`). Either way the board tells only the sessions whose document
/// can change, each through a job on its own loop (`Session.presenceChanged`), which reads the
/// board again there: a notification carries no state, so two of them arriving in either order
/// leave the same document. Sessions told:
/// - the others that have the same user open here (their detail screen's `present`);
/// - every session, but only when the user goes from open nowhere else to open somewhere (or
///   back), the one moment a list's `open_elsewhere` changes for a session not holding it.
/// Each loop gets one job per publication, which tells its sessions in turn. So typing a draft
/// tells each other holder, and opening a user tells every session only when nobody had it
/// open; never a scan of every session per session.
///
/// Shared (`share(through:daemon:)`, with a store several daemons use): a change of this
/// daemon's people on a user is queued for the others (`PresenceOutbox`), taken by the relay's
/// thread; the others' people are kept per daemon (`RemotePresence`) and expire when their
/// daemon stops re-announcing them (`renew`). Not shared (SQLite, one daemon per file): this
/// daemon's sessions only.
/// The lock is a leaf: nothing is called while it is held.
package final class PresenceBoard: Sendable {
    /// One session's presence: its uid's login name and whether its draft differs from the name.
    package typealias Holder = PresenceHolder

    private struct Watcher {
        let loop: EventLoop
        let session: WeakSession
    }

    private struct State {
        /// User id → session id → that session's presence.
        var holders: [UUID: [String: Holder]] = [:]
        /// Session id → the user it has open.
        var open: [String: UUID] = [:]
        /// Every running session, by id, told when a list's marker may change for it.
        var watchers: [String: Watcher] = [:]
        /// The other daemons' people.
        var remote = RemotePresence()
        /// What to tell the other daemons (nil: not shared, or no longer).
        var outbox: PresenceOutbox?
        /// The relay, while shared; and what it has left to send once sharing ended (`gone`).
        var relay: (any PresenceRelay)?
        var farewell: [PresenceMessage] = []

        func isHeld(_ user: UUID) -> Bool { holders[user] != nil || remote.isHeld(user) }

        /// The sessions to tell that `user`'s people changed (it was held anywhere: `wasHeld`),
        /// all but `except` (the session that changed it).
        func told(_ user: UUID, wasHeld: Bool, except: String?) -> [(Watcher, UUID)] {
            var told: [(Watcher, UUID)] = []
            if wasHeld != isHeld(user) {
                // Open nowhere before, or nowhere now: every list's marker for it flips.
                for (other, watcher) in watchers where other != except { told.append((watcher, user)) }
            } else {
                // Only the holders here see a difference (their `present`, and their own
                // marker when they were or are left alone with it).
                for other in holders[user]?.keys ?? [:].keys where other != except {
                    if let watcher = watchers[other] { told.append((watcher, user)) }
                }
            }
            return told
        }

        /// Queues this daemon's people on `user` for the others, when shared; whether to wake the relay.
        mutating func announce(_ user: UUID) -> Bool {
            guard outbox != nil else { return false }
            return outbox!.held(user, by: PresenceOutbox.people((holders[user] ?? [:]).values))
        }
    }

    private let state = Lock(State())

    package init() {}

    /// Starts telling `session` of presence changes (on its own loop).
    func watch(_ session: Session) {
        let watcher = Watcher(loop: session.loop, session: WeakSession(session))
        state.withLock { $0.watchers[session.id] = watcher }
    }

    /// Sets what session `id` has open (`nil`: nothing, or it detached or ended) and tells the
    /// sessions whose documents change.
    func set(_ id: String, _ presence: (user: UUID, holder: Holder)?) {
        let (told, relay) = state.withLock { state -> ([(Watcher, UUID)], (any PresenceRelay)?) in
            var changed: [(user: UUID, wasHeld: Bool)] = []
            if let previous = state.open[id], previous != presence?.user {
                state.holders[previous]?[id] = nil
                if state.holders[previous]?.isEmpty == true { state.holders[previous] = nil }
                state.open[id] = nil
                changed.append((previous, true))
            }
            if let presence, state.holders[presence.user]?[id] != presence.holder {
                let wasHeld = state.isHeld(presence.user)
                state.holders[presence.user, default: [:]][id] = presence.holder
                state.open[id] = presence.user
                changed.append((presence.user, wasHeld))
            }
            var wake = false
            for (user, _) in changed where state.announce(user) { wake = true }
            return (changed.flatMap { state.told($0.user, wasHeld: $0.wasHeld, except: id) }, wake ? state.relay : nil)
        }
        relay?.wake()
        Self.tell(told)
    }

    /// One job per loop, which tells each of its sessions in turn: a user opened where nobody
    /// had it costs a job per loop (at most four), not one per session.
    private static func tell(_ told: [(Watcher, UUID)]) {
        var byLoop: [ObjectIdentifier: (loop: EventLoop, told: [(session: WeakSession,
                                                                 user: UUID)])] = [:]
        for (watcher, user) in told {
            let weak = watcher.session
            byLoop[ObjectIdentifier(watcher.loop), default: (watcher.loop, [])].told.append((weak, user))
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
            let relay = state.withLock { state -> (any PresenceRelay)? in
                var wake = false
                if let user = state.open.removeValue(forKey: id) {
                    state.holders[user]?[id] = nil
                    if state.holders[user]?.isEmpty == true { state.holders[user] = nil }
                    wake = state.announce(user)
                }
                state.watchers[id] = nil
                return wake ? state.relay : nil
            }
            relay?.wake()
            return
        }
        set(id, nil)
        state.withLock { _ = $0.watchers.removeValue(forKey: id) }
    }

    /// The user session `id` has open and whether its draft differs from the stored name; nil
    /// when it has none open or no client attached (`userctl sessions`, via Introspection).
    package func presence(of id: String) -> (user: UUID, editing: Bool)? {
        state.withLock { state in
            guard let user = state.open[id], let holder = state.holders[user]?[id] else { return nil }
            return (user, holder.editing)
        }
    }

    /// The others who have `user` open, as `id` sees them: this daemon's other sessions, and
    /// the other daemons' people.
    func others(of user: UUID, seenBy id: String) -> [String: Holder] {
        state.withLock { state in
            var holders = state.holders[user] ?? [:]
            holders[id] = nil
            for (key, holder) in state.remote.holders(of: user) { holders[key] = holder }
            return holders
        }
    }

    /// The users some session other than `id`, here or on another daemon, has open (its list's
    /// markers): read once, when a session starts; after that each notification updates one user.
    func openElsewhere(seenBy id: String) -> Set<UUID> {
        state.withLock { state in
            var users = Set(state.remote.users)
            for (user, holders) in state.holders where holders.count > 1 || holders[id] == nil { users.insert(user) }
            return users
        }
    }

    // MARK: shared with the other daemons on the store

    /// Shares presence with the other daemons through `relay`, as `daemon` (its name in the
    /// history: host and socket, so a restarted daemon's first word, `gone`, replaces what it
    /// said before it died).
    package func share(through relay: any PresenceRelay, daemon: String) {
        state.withLock { state in
            var outbox = PresenceOutbox(daemon: daemon)
            for (user, holders) in state.holders { _ = outbox.held(user, by: PresenceOutbox.people(holders.values)) }
            state.outbox = outbox
            state.relay = relay
        }
        relay.start(daemon: daemon, receive: { [weak self] in self?.receive($0) },
                    outgoing: { [weak self] in self?.takeOutgoing() ?? [] })
    }

    /// Stops sharing: the others are told this daemon has nothing open (`gone`), and the relay
    /// stops once it has sent that. Sessions ending after this tell nobody outside.
    package func stopSharing() async {
        let relay = state.withLock { state -> (any PresenceRelay)? in
            guard let outbox = state.outbox, let relay = state.relay else { return nil }
            state.farewell = [.gone(daemon: outbox.daemon)]
            state.outbox = nil
            state.relay = nil
            return relay
        }
        await relay?.stop()
    }

    /// What the relay sends next (on its thread).
    package func takeOutgoing() -> [PresenceMessage] {
        state.withLock { state in
            guard state.outbox != nil else {
                defer { state.farewell = [] }
                return state.farewell
            }
            return state.outbox!.take()
        }
    }

    /// Another daemon's message (on the relay's thread), or this daemon's own `ask` when the
    /// relay (re)connected; `now` is when it was heard.
    package func receive(_ message: PresenceMessage, at now: ContinuousClock.Instant = .now) {
        let (told, relay) = state.withLock { state -> ([(Watcher, UUID)], (any PresenceRelay)?) in
            switch message {
            case .holders(let daemon, let user, let people):
                let wasHeld = state.isHeld(user)
                guard state.remote.set(people, of: user, on: daemon, at: now) else { return ([], nil) }
                return (state.told(user, wasHeld: wasHeld, except: nil), nil)
            case .gone(let daemon):
                let users = state.remote.drop(daemon)
                // Each was held before (by `daemon`); `told` compares with what is left.
                return (users.flatMap { state.told($0, wasHeld: true, except: nil) }, nil)
            case .ask(let daemon):
                guard state.outbox != nil else { return ([], nil) }
                if daemon == state.outbox!.daemon { state.outbox!.rejoin() } else { state.outbox!.announceAll() }
                return ([], state.outbox!.isEmpty ? nil : state.relay)
            }
        }
        relay?.wake()
        Self.tell(told)
    }

    /// Every `interval`: says again everything this daemon holds (so the others keep it), and
    /// drops the other daemons' people not heard of since `expiry` ago (their daemon died).
    package func renew(expiring expiry: Duration, at now: ContinuousClock.Instant = .now) {
        let (told, relay) = state.withLock { state -> ([(Watcher, UUID)], (any PresenceRelay)?) in
            let users = state.remote.expire(heardBefore: now - expiry)
            let told = users.flatMap { state.told($0, wasHeld: true, except: nil) }
            guard state.outbox != nil else { return (told, nil) }
            state.outbox!.announceAll()
            return (told, state.outbox!.isEmpty ? nil : state.relay)
        }
        relay?.wake()
        Self.tell(told)
    }
}
