import Foundation
import UserListDomain

/// Who has which user open on the other daemons sharing the store, as they announced it
/// (`PresenceMessage`): kept per daemon, so one daemon's goodbye or silence takes away only its
/// own people. A value inside `PresenceBoard`'s state, under its lock; no I/O and no clock of its
/// own (the board passes the time), so it is tested without processes.
///
/// An entry expires when its daemon has not announced it again for the expiry (a daemon
/// re-announces everything it holds every interval, so only a daemon that died, or lost its
/// connection to the store, goes silent).
struct RemotePresence {
    private struct Entry {
        var holders: [PresenceHolder]
        var heard: ContinuousClock.Instant
    }

    /// User → daemon → what that daemon last said of the user.
    private var entries: [UUID: [String: Entry]] = [:]

    /// Whether some other daemon has `user` open.
    func isHeld(_ user: UUID) -> Bool { entries[user] != nil }

    /// Every user some other daemon has open.
    var users: [UUID] { Array(entries.keys) }

    /// The people the other daemons have on `user`, each keyed apart from every local session
    /// id (a newline never occurs in a session id).
    func holders(of user: UUID) -> [(key: String, holder: PresenceHolder)] {
        var holders: [(String, PresenceHolder)] = []
        for (daemon, entry) in entries[user] ?? [:] {
            for (index, holder) in entry.holders.enumerated() { holders.append(("\(daemon)\n\(index)", holder)) }
        }
        return holders
    }

    /// `daemon` says who has `user` open there now; returns whether what is shown changed (a
    /// re-announcement of the same people only renews the entry).
    mutating func set(_ holders: [PresenceHolder], of user: UUID, on daemon: String,
                      at now: ContinuousClock.Instant) -> Bool {
        guard !holders.isEmpty else {
            guard entries[user]?.removeValue(forKey: daemon) != nil else { return false }
            if entries[user]?.isEmpty == true { entries[user] = nil }
            return true
        }
        let changed = entries[user]?[daemon]?.holders != holders
        entries[user, default: [:]][daemon] = Entry(holders: holders, heard: now)
        return changed
    }

    /// Drops all `daemon` said (it stopped, or started afresh); returns the users it had open.
    mutating func drop(_ daemon: String) -> [UUID] {
        var dropped: [UUID] = []
        for (user, byDaemon) in entries where byDaemon[daemon] != nil {
            dropped.append(user)
            entries[user]?[daemon] = nil
            if entries[user]?.isEmpty == true { entries[user] = nil }
        }
        return dropped
    }

    /// Drops every entry last heard before `cutoff`; returns the users whose people changed.
    mutating func expire(heardBefore cutoff: ContinuousClock.Instant) -> [UUID] {
        var changed: [UUID] = []
        for (user, byDaemon) in entries {
            let kept = byDaemon.filter { $0.value.heard >= cutoff }
            guard kept.count != byDaemon.count else { continue }
            changed.append(user)
            entries[user] = kept.isEmpty ? nil : kept
        }
        return changed
    }
}
