import Foundation

/// One person who has a user open: their login name, and whether their draft differs from the
/// stored name. Never the draft itself: this is all another person, or another daemon, learns.
public struct PresenceHolder: Equatable, Hashable, Sendable {
    public var name: String
    public var editing: Bool

    public init(name: String, editing: Bool) {
        self.name = name
        self.editing = editing
    }
}

/// What one daemon tells the others sharing its store about who has which user open.
///
/// Each message names its daemon, so a receiver keeps every daemon's holders apart and can drop
/// them all at once (a daemon that stopped) or let them expire (one that died: it stops
/// re-announcing).
public enum PresenceMessage: Equatable, Sendable {
    /// The people who have `user` open on `daemon` now, each once (empty: nobody any more).
    /// Replaces whatever `daemon` said of `user` before.
    case holders(daemon: String, user: UUID, [PresenceHolder])
    /// `daemon` has nothing open: it stopped cleanly, or started afresh (a receiver drops all
    /// it said before).
    case gone(daemon: String)
    /// `daemon` (re)joined and asks every daemon to say again all it has open.
    case ask(daemon: String)

    /// The daemon the message is from.
    public var daemon: String {
        switch self {
        case .holders(let daemon, _, _), .gone(let daemon), .ask(let daemon): daemon
        }
    }
}

/// Carries presence between the daemons sharing one store (PostgreSQL: `NOTIFY`/`LISTEN`).
/// A store one daemon has to itself (SQLite) has none: its presence never leaves the daemon.
///
/// The relay sends only what its daemon hands it, in the order given, and pulls it (`outgoing`)
/// on its own thread, so messages leave in the order the daemon queued them whichever threads
/// queued them. It passes on every other daemon's message once, on its own thread, and never
/// its own daemon's.
public protocol PresenceRelay: Sendable {
    /// Starts relaying for `daemon`. `receive` gets the other daemons' messages; after every
    /// (re)connection it first gets `.ask(daemon:)` with this daemon's own name, meaning "what
    /// you said while disconnected may be lost: ask the others and say everything again".
    /// `outgoing` is called when woken (and after each `receive`) for what to send next.
    func start(daemon: String, receive: @escaping @Sendable (PresenceMessage) -> Void,
               outgoing: @escaping @Sendable () -> [PresenceMessage])
    /// There is something to send: `outgoing` is called soon. Any thread; never blocks.
    func wake()
    /// Sends what `outgoing` has left (a `.gone`, at a clean stop), then stops and disconnects.
    func stop() async
}
