import Foundation
import Synchronization
import UserListDomain
import UserListPresentation

/// Owns the sessions. Touched only when a client attaches or detaches and by the retention
/// sweep, never per intent: a connection keeps a direct reference to its session's actor.
package final class SessionRegistry: Sendable {
    package enum AttachError: Error, Equatable {
        case tooManySessions(limit: Int)
    }

    private struct Entries {
        var sessions: [SessionKey: Session] = [:]
        var connectionsPerUID: [UInt32: Int] = [:]
    }

    private let entries = Mutex(Entries())
    private let useCases: UserUseCases
    private let changes: ChangeBroadcaster
    private let logger: Logger
    private let limits: Mutex<(sessionsPerUID: Int, connectionsPerUID: Int, retention: Duration)>
    private let isWriter: @Sendable (UInt32) -> Bool

    package init(useCases: UserUseCases, feed: any UserChangeFeed, logger: Logger, config: DaemonConfig,
                 isWriter: @escaping @Sendable (UInt32) -> Bool) {
        self.useCases = useCases
        self.changes = ChangeBroadcaster(feed: feed)
        self.logger = logger
        self.isWriter = isWriter
        self.limits = Mutex((config.maxSessionsPerUID, config.maxConnectionsPerUID, .seconds(config.retentionSeconds)))
    }

    /// SIGHUP: limits and retention can change at run time.
    package func reload(_ config: DaemonConfig) {
        limits.withLock { $0 = (config.maxSessionsPerUID, config.maxConnectionsPerUID, .seconds(config.retentionSeconds)) }
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

    package func connectionClosed(uid: UInt32) {
        entries.withLock { entries in
            let remaining = entries.connectionsPerUID[uid, default: 1] - 1
            entries.connectionsPerUID[uid] = remaining > 0 ? remaining : nil
        }
    }

    package var connectionLimit: Int { limits.withLock { $0.connectionsPerUID } }

    // MARK: sessions

    /// The session for `key`, created if new. `resumed` tells whether it existed.
    package func session(for key: SessionKey) throws(AttachError) -> (session: Session, resumed: Bool) {
        let limit = limits.withLock { $0.sessionsPerUID }
        let result = entries.withLock { entries -> Result<(Session, Bool), AttachError> in
            if let existing = entries.sessions[key] { return .success((existing, true)) }
            let owned = entries.sessions.keys.lazy.filter { $0.uid == key.uid }.count
            guard owned < limit else { return .failure(.tooManySessions(limit: limit)) }
            let session = Session(key: key, canWrite: { [isWriter] in isWriter(key.uid) }, useCases: useCases, changes: changes, logger: logger)
            entries.sessions[key] = session
            return .success((session, false))
        }
        return try result.get()
    }

    /// Puts back sessions saved by a previous run.
    package func restore(_ saved: [SavedSession]) {
        entries.withLock { entries in
            for item in saved {
                entries.sessions[item.key] = Session(
                    key: item.key, id: item.id, canWrite: { [isWriter] in isWriter(item.key.uid) }, useCases: useCases,
                    changes: changes, logger: logger, restoring: item.state)
            }
        }
    }

    /// For sessions the registry does not own (the watchdog's probe).
    package var changeBroadcaster: ChangeBroadcaster { changes }

    package var allSessions: [Session] { entries.withLock { Array($0.sessions.values) } }

    package var sessionCount: Int { entries.withLock { $0.sessions.count } }

    package var connectionCount: Int { entries.withLock { $0.connectionsPerUID.values.reduce(0, +) } }

    /// Ends `session` if no client is attached to it (after a `bye`).
    package func endIfUnattended(_ session: Session) {
        entries.withLock { entries in
            guard entries.sessions[session.key] === session,
                  session.activity.withLock({ $0.clients == 0 }) else { return }
            entries.sessions.removeValue(forKey: session.key)
        }
    }

    /// Drops sessions detached for longer than the retention period; returns how many.
    @discardableResult
    package func sweep(now: ContinuousClock.Instant = .now) -> Int {
        let retention = limits.withLock { $0.retention }
        return entries.withLock { entries in
            let expired = entries.sessions.filter { _, session in
                session.activity.withLock { activity in
                    guard activity.clients == 0, let since = activity.detachedAt else { return false }
                    return now - since >= retention
                }
            }
            for key in expired.keys { entries.sessions.removeValue(forKey: key) }
            return expired.count
        }
    }
}

/// A session as written to the state directory on shutdown.
package struct SavedSession: Codable, Sendable {
    package let key: SessionKey
    package let id: String
    package let state: NavigationState
}
