import Foundation
import UserListDomain
import UserListPresentation
import ThreadLocks

/// Owns the sessions. Touched only when a client attaches or detaches and by the retention
/// sweep, never per intent: a connection keeps a direct reference to its session's actor.
package final class SessionRegistry: Sendable {
    package enum AttachError: Error, Equatable {
        case tooManySessions(limit: Int)
    }

    private struct Entries {
        private(set) var sessions: [SessionKey: Session] = [:]
        /// How many of `sessions` each uid holds, kept with them: the per-uid limit is checked
        /// on every new session, and counting by a scan made attaching n sessions O(n²).
        private(set) var sessionsPerUID: [UInt32: Int] = [:]
        var connectionsPerUID: [UInt32: Int] = [:]
        /// Sessions handed to a connection whose attach has not run yet: never evicted.
        var attaching: [SessionKey: Int] = [:]

        mutating func insert(_ session: Session, for key: SessionKey) {
            if sessions.updateValue(session, forKey: key) == nil { sessionsPerUID[key.uid, default: 0] += 1 }
        }

        mutating func remove(_ key: SessionKey) -> Session? {
            guard let session = sessions.removeValue(forKey: key) else { return nil }
            let left = sessionsPerUID[key.uid, default: 1] - 1
            sessionsPerUID[key.uid] = left > 0 ? left : nil
            return session
        }
    }

    private struct Limits {
        var sessionsPerUID: Int
        var connectionsPerUID: Int
        var retention: Duration
        var partialBytesPerUID: Int
        var messagesPerUID: Int
        var connectsPerUID: Int

        init(_ config: DaemonConfig) {
            sessionsPerUID = config.maxSessionsPerUID
            connectionsPerUID = config.maxConnectionsPerUID
            retention = .seconds(config.retentionSeconds)
            partialBytesPerUID = config.maxPartialBytesPerUID
            messagesPerUID = config.intentsPerSecondPerUID
            connectsPerUID = config.connectionsPerSecondPerUID
        }
    }

    private let entries = Lock(Entries())
    /// Unfinished-frame bytes per uid, apart from `entries`: touched on the read path.
    private let partialBytes = Lock<[UInt32: Int]>([:])
    /// Each uid's one-second message window.
    private let messageWindows = PerUIDWindows()
    /// Each uid's one-second window of new connections.
    private let connectWindows = PerUIDWindows()
    private let useCases: UserUseCases
    private let changes: ChangeBroadcaster
    /// Where sessions run: a new session on its first client's loop, a restored one in turn.
    private let loops: EventLoopGroup
    private let logger: Logger
    private let limits: Lock<Limits>
    private let isWriter: @Sendable (UInt32) -> Bool
    /// Given to every session, so its state survives a crash (nil: saved only at shutdown).
    private let journal: SessionJournal?
    /// This daemon in the history its sessions' writes record.
    private let daemonName: String
    /// Who has which user open, in this daemon's sessions and (shared by the daemon, with
    /// PostgreSQL) on the others' (their documents' presence).
    package let presence = PresenceBoard()

    package init(useCases: UserUseCases, feed: any UserChangeFeed, loops: EventLoopGroup, logger: Logger,
                 config: DaemonConfig,
                 isWriter: @escaping @Sendable (UInt32) -> Bool, journal: SessionJournal? = nil) {
        self.journal = journal
        self.useCases = useCases
        self.loops = loops
        self.changes = ChangeBroadcaster(feed: feed, loops: loops.loops)
        self.logger = logger
        self.isWriter = isWriter
        self.limits = Lock(Limits(config))
        self.daemonName = SessionAuthor.daemonName(socketPath: config.socketPath)
    }

    /// The use cases a session of `uid` gets: its writes recorded as its author's. Built before
    /// taking `entries` (the login name lookup may ask NSS).
    private func authoredUseCases(uid: UInt32, client: String?) -> UserUseCases {
        useCases.authored(by: SessionAuthor.make(uid: uid, client: client, daemon: daemonName))
    }

    /// SIGHUP: limits and retention can change at run time.
    package func reload(_ config: DaemonConfig) {
        limits.withLock { $0 = Limits(config) }
    }

    // MARK: connections

    /// Counts a new connection for `uid`; false when the uid already holds its limit.
    package func connectionOpened(uid: UInt32) -> Bool {
        let limit = limits.withLock { $0.connectionsPerUID }
        return entries.withLock { entries in
            let current = entries.connectionsPerUID[uid, default: 0]
            guard current < limit else { return false }
            entries.connectionsPerUID[uid] = current + 1
            return true
        }
    }

    /// Counts a connection handed over by the previous process: it was within the limit there.
    package func forceConnectionOpened(uid: UInt32) {
        entries.withLock { $0.connectionsPerUID[uid, default: 0] += 1 }
    }

    package func connectionClosed(uid: UInt32) {
        entries.withLock { entries in
            let remaining = entries.connectionsPerUID[uid, default: 1] - 1
            entries.connectionsPerUID[uid] = remaining > 0 ? remaining : nil
        }
    }

    package var connectionLimit: Int { limits.withLock { $0.connectionsPerUID } }

    /// Adds `delta` to the unfinished-frame bytes `uid` holds; false when that passes the
    /// uid's budget (the caller closes the connection, which gives its bytes back).
    package func adjustPartialBytes(uid: UInt32, by delta: Int) -> Bool {
        let budget = limits.withLock { $0.partialBytesPerUID }
        return partialBytes.withLock { held in
            let total = held[uid, default: 0] + delta
            held[uid] = total > 0 ? total : nil
            return delta <= 0 || total <= budget
        }
    }

    /// Counts one message from `uid`. Returns when the uid's window ends if this message used
    /// up its share for the window (its connections then stop reading until that time), else nil.
    package func chargeMessage(uid: UInt32, now: Int64) -> Int64? {
        let budget = limits.withLock { $0.messagesPerUID }
        let (start, count) = messageWindows.charge(uid: uid, now: now)
        return count >= budget ? start + 1_000_000_000 : nil
    }

    /// Counts one new connection from `uid`; false when the uid already opened its share of
    /// connections this second (the caller refuses it).
    package func chargeConnect(uid: UInt32, now: Int64) -> Bool {
        let budget = limits.withLock { $0.connectsPerUID }
        return connectWindows.charge(uid: uid, now: now).count <= budget
    }

    package var connectsPerSecondLimit: Int { limits.withLock { $0.connectsPerUID } }

    /// Unfinished-frame bytes `uid` holds now (tests, status).
    package func partialBytes(uid: UInt32) -> Int { partialBytes.withLock { $0[uid, default: 0] } }

    // MARK: sessions

    /// The session for `key`, created if new (on `loop`, the attaching connection's, so that
    /// client's intents and patches stay on one thread); `resumed` tells whether it existed.
    /// The caller attaches to it and then calls `attachFinished(key)`.
    ///
    /// At its limit a uid does not lock itself out: its least recently used session with no
    /// client attached is ended to make room. Only a uid whose every session has a client is
    /// refused.
    /// `client`: the hello's client name, recorded with the new session's writes.
    package func session(for key: SessionKey, on loop: EventLoop,
                         client: String? = nil) throws(AttachError) -> (session: Session, resumed: Bool) {
        let limit = limits.withLock { $0.sessionsPerUID }
        let authored = authoredUseCases(uid: key.uid, client: client)
        var evicted: Session?
        let result = entries.withLock { entries -> Result<(Session, Bool), AttachError> in
            if let existing = entries.sessions[key] {
                entries.attaching[key, default: 0] += 1
                return .success((existing, true))
            }
            if entries.sessionsPerUID[key.uid, default: 0] >= limit {
                let owned = entries.sessions.filter { $0.key.uid == key.uid }
                guard let victim = Self.leastRecentlyUsedDetached(owned, attaching: entries.attaching) else {
                    return .failure(.tooManySessions(limit: limit))
                }
                evicted = entries.remove(victim.key)
            }
            let session = Session(key: key, loop: loop, canWrite: { [isWriter] in isWriter(key.uid) },
                                  useCases: authored,
                                  changes: changes, logger: logger, journal: journal, presence: presence)
            entries.insert(session, for: key)
            entries.attaching[key, default: 0] += 1
            return .success((session, false))
        }
        if let evicted {
            ended(evicted)
            logger.info("Ended the least recently used detached session to make room for a new one",
                        ["USERLISTD_SESSION": evicted.id, "USERLISTD_CLIENT_UID": String(key.uid)])
        }
        return try result.get()
    }

    /// The attach that `session(for:)` was asked for has run: the session may be evicted again
    /// once it is detached.
    package func attachFinished(_ key: SessionKey) {
        entries.withLock { entries in
            let left = entries.attaching[key, default: 1] - 1
            entries.attaching[key] = left > 0 ? left : nil
        }
    }

    private static func leastRecentlyUsedDetached(_ sessions: [SessionKey: Session],
                                                  attaching: [SessionKey: Int]) -> (key: SessionKey, value: Session)? {
        var best: (key: SessionKey, value: Session, lastActive: ContinuousClock.Instant)?
        for (key, session) in sessions where attaching[key] == nil {
            let (detached, lastActive) = session.activity.withLock { ($0.clients == 0, $0.lastActive) }
            guard detached else { continue }
            if best == nil || lastActive < best!.lastActive { best = (key, session, lastActive) }
        }
        return best.map { ($0.key, $0.value) }
    }

    /// Puts back sessions saved by a previous run. The time a session spent detached counts
    /// across the restart: one past its retention is not restored, and the others expire when
    /// their retention runs out, like any detached session.
    @discardableResult
    package func restore(_ saved: [SavedSession], now: Date = Date(), clock: ContinuousClock.Instant = .now) -> Int {
        let retention = limits.withLock { $0.retention }
        let retentionSeconds = Double(retention.components.seconds) + Double(retention.components.attoseconds) / 1e18
        // One login name lookup per uid; each session's writes then carry its own client's name.
        var authors: [UInt32: ChangeAuthor] = [:]
        for uid in Set(saved.map(\.key.uid)) {
            authors[uid] = SessionAuthor.make(uid: uid, client: nil, daemon: daemonName)
        }
        let authored = saved.map { item -> UserUseCases in
            guard var author = authors[item.key.uid] else { return useCases }
            author.client = item.client
            return useCases.authored(by: author)
        }
        return entries.withLock { entries in
            var restored = 0
            for (item, authored) in zip(saved, authored) {
                let detachedFor = max(0, now.timeIntervalSince(item.detachedAt ?? now))
                guard detachedFor < retentionSeconds else { continue }
                let session = Session(
                    key: item.key, id: item.id, loop: loops.next(), canWrite: { [isWriter] in isWriter(item.key.uid) },
                    useCases: authored,
                    changes: changes, logger: logger, restoring: item.state, listWindow: item.listWindow,
                    journal: journal, presence: presence)
                let since = clock - .seconds(detachedFor)
                session.activity.withLock {
                    $0.detachedAt = since
                    $0.lastActive = since
                }
                entries.insert(session, for: item.key)
                restored += 1
            }
            return restored
        }
    }

    /// For sessions the registry does not own (the watchdog's probe).
    package var changeBroadcaster: ChangeBroadcaster { changes }

    package var allSessions: [Session] { entries.withLock { Array($0.sessions.values) } }

    package var sessionCount: Int { entries.withLock { $0.sessions.count } }

    package var connectionCount: Int { entries.withLock { $0.connectionsPerUID.values.reduce(0, +) } }

    /// Ends `session` if no client is attached to it (after a `bye`).
    package func endIfUnattended(_ session: Session) {
        let removed = entries.withLock { entries -> Session? in
            guard entries.sessions[session.key] === session, entries.attaching[session.key] == nil,
                  session.activity.withLock({ $0.clients == 0 }) else { return nil }
            return entries.remove(session.key)
        }
        if let removed { ended(removed) }
    }

    /// A session the registry no longer holds stops following changes, and so ends once its
    /// last client handler lets go of it.
    private func ended(_ session: Session) {
        session.stopFollowingChanges()
    }

    /// Drops sessions detached for longer than the retention period; returns how many.
    @discardableResult
    package func sweep(now: ContinuousClock.Instant = .now) -> Int {
        let retention = limits.withLock { $0.retention }
        let expired = entries.withLock { entries in
            let expired = entries.sessions.filter { key, session in
                entries.attaching[key] == nil && session.activity.withLock { activity in
                    guard activity.clients == 0, let since = activity.detachedAt else { return false }
                    return now - since >= retention
                }
            }
            for key in expired.keys { _ = entries.remove(key) }
            // Message windows of uids that have been quiet are forgotten.
            let stale = MonotonicClock.nanoseconds() - 10_000_000_000
            messageWindows.forgetQuiet(before: stale)
            connectWindows.forgetQuiet(before: stale)
            return expired.values
        }
        for session in expired { ended(session) }
        return expired.count
    }
}

/// A session as written to the state directory on shutdown.
package struct SavedSession: Codable, Sendable {
    package let key: SessionKey
    package let id: String
    package let state: NavigationState
    /// When its last client left (wall clock), or nil while clients were attached: retention
    /// counts from here across restarts. Absent in files of older versions (taken as now).
    package let detachedAt: Date?
    /// How far its list had been read (`state` keeps none of the rows). Absent in files of older
    /// versions (the list restarts at its first page).
    package let listWindow: UserListWindow?
    /// The client's name from the hello its writes are recorded with (history's `client`), so a
    /// restored session's writes still say which client made them until one attaches and names
    /// itself. Absent in files of older versions (nil: none until a client attaches).
    package let client: String?

    package init(key: SessionKey, id: String, state: NavigationState, detachedAt: Date?,
                 listWindow: UserListWindow? = nil, client: String? = nil) {
        self.key = key
        self.id = id
        self.state = state
        self.detachedAt = detachedAt
        self.listWindow = listWindow
        self.client = client
    }

    /// A session's state to save: what a restore uses of it, and how far its list was read.
    package init(key: SessionKey, id: String, fullState: NavigationState, detachedAt: Date?, client: String?) {
        self.init(key: key, id: id, state: SessionJournal.reduced(fullState), detachedAt: detachedAt,
                  listWindow: SessionJournal.listWindow(of: fullState), client: client)
    }
}
