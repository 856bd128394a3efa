import Foundation
import UserListDomain

/// What this daemon has still to tell the others of its presence, and what it last told them.
/// A value inside `PresenceBoard`'s state, under its lock: the board queues here as its sessions
/// change, and the relay's one thread takes it all (`take`), so messages leave in the order they
/// were queued, whichever loops queued them.
///
/// Announcements are per user and coalesce: a user changed twice before the relay takes them
/// is sent once, as it is now. Only a change of what the others see is queued (a second session
/// of the same person opening the same user is not).
struct PresenceOutbox {
    let daemon: String
    /// `gone` and `ask`, before any announcement.
    private var control: [PresenceMessage]
    /// Users to announce, with their people now (empty: nobody any more).
    private var pending: [UUID: [PresenceHolder]] = [:]
    /// The people last queued for each user this daemon holds (the re-announcements).
    private var told: [UUID: [PresenceHolder]] = [:]

    /// Starts with `gone`: whatever an earlier process of this daemon said (one that died) is
    /// dropped by the others before anything new arrives.
    init(daemon: String) {
        self.daemon = daemon
        control = [.gone(daemon: daemon)]
    }

    var isEmpty: Bool { control.isEmpty && pending.isEmpty }

    /// This daemon's people on `user` are now `holders` (sorted, each name once); returns
    /// whether that is news to the others.
    mutating func held(_ user: UUID, by holders: [PresenceHolder]) -> Bool {
        guard told[user] ?? [] != holders else { return false }
        told[user] = holders.isEmpty ? nil : holders
        pending[user] = holders
        return true
    }

    /// Everything this daemon holds, said again: the periodic renewal, or another daemon asked.
    mutating func announceAll() {
        for (user, holders) in told { pending[user] = holders }
    }

    /// This daemon (re)connected: the others are asked to say again what they hold, and it
    /// says again what it holds.
    mutating func rejoin() {
        control.append(.ask(daemon: daemon))
        announceAll()
    }

    /// Everything queued, in order, and the queue emptied.
    mutating func take() -> [PresenceMessage] {
        let messages = control + pending.map { PresenceMessage.holders(daemon: daemon, user: $0.key, $0.value) }
        control = []
        pending = [:]
        return messages
    }

    /// The people of `holders`, as announced: each name once, editing if any of theirs is.
    static func people(_ holders: some Sequence<PresenceHolder>) -> [PresenceHolder] {
        var byName: [String: Bool] = [:]
        for holder in holders { byName[holder.name] = byName[holder.name, default: false] || holder.editing }
        return byName.map { PresenceHolder(name: $0.key, editing: $0.value) }.sorted { $0.name < $1.name }
    }
}
