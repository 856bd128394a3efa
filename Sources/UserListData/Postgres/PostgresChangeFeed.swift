import Foundation
import Glibc
import Synchronization
import UserListDomain
import ThreadLocks

/// Every committed change to a shared PostgreSQL store, from any daemon on any host, delivered
/// to each observer once and in commit order.
///
/// How it knows: each writing transaction logs its change in `changes` (with a snapshot of the
/// row) and `NOTIFY`s `userlist_changes`, under a transaction advisory lock, so `seq` order is
/// commit order (see `PostgresSchema.changeLogLock`). The feed keeps one connection of its own on
/// a dedicated thread, `LISTEN`s, and on each notification reads the rows after the last `seq`
/// it delivered. After a disconnect it reconnects with backoff (0.1 s doubling to 5 s) and
/// resumes from that `seq`, so nothing committed meanwhile is missed; if the log was pruned
/// past it (`store_state.pruned_through`), it cannot know what changed: it delivers
/// `UserChange.resync` in place of the lost changes (and reports `.resync` on `events()`).
///
/// The daemon's own commits (an observed `PostgresUserRepository`) are delivered at once,
/// without the NOTIFY round trip, when they are the next `seq`; otherwise (another daemon's
/// change is still in flight) the feed is woken to read the log in order. Either way each
/// `seq` is delivered once: delivery happens under one lock, only past the last `seq`.
public final class PostgresChangeFeed: UserChangeFeed, Sendable {
    /// What happens to the feed's connection, for the daemon's journal and status.
    public enum Event: Sendable, Equatable {
        case disconnected(reason: String)
        case reconnected
        /// The log was pruned past what this daemon had seen: cached pages and screens may be
        /// stale and should be reloaded.
        case resync
    }

    private let core: Core

    /// Connects (failing with `.unavailable` when the server cannot be reached), starts
    /// listening and starts after the newest change already logged.
    public init(connection: PGConnectionString) throws(UserError) {
        core = try Core(connection: connection)
        let core = self.core
        let thread = Thread { core.run() }
        thread.name = "userlistd.postgres.feed"
        thread.start()
    }

    /// As above, and hears of `repository`'s own commits at once.
    public convenience init(observing repository: PostgresUserRepository) throws(UserError) {
        try self.init(connection: repository.connection)
        let core = self.core
        repository.onCommit { [weak core] commit in core?.committedHere(commit) }
    }

    deinit { core.stop() }

    public func observe(_ handler: @escaping @Sendable (CommittedChange) -> Void) -> ChangeObservation {
        let core = self.core
        let id = core.observe(handler)
        return ChangeObservation { [weak core] in core?.unobserve(id) }
    }

    /// Disconnections, reconnections and resyncs, from now on.
    public func events() -> AsyncStream<Event> { core.events() }
}

extension PostgresChangeFeed {
    final class Core: Sendable {
        /// Its PGconn for LISTEN and the log: `init`'s, then the feed thread's alone (the first to
        /// use it after `init`).
        private let owned: Confined<PGConnection>
        private var listener: PGConnection { owned.value }
        let state: Lock<State>
        /// Changes taken in `seq` order under `state`, handed to the observers after it.
        private let handOff: OrderedHandOff<CommittedChange>
        private let stopped = Atomic<Bool>(false)
        private let nudged = Atomic<Bool>(false)
        /// A pipe that wakes the feed thread from `poll` (a nudge, or stop).
        private let wakePipe = WakePipe()

        struct State {
            var lastSeq: Int
            /// Called with each change on the thread that hands it out.
            var observers: [Int: @Sendable (CommittedChange) -> Void] = [:]
            var eventSubscribers: [Int: AsyncStream<Event>.Continuation] = [:]
            var nextID = 0
        }

        static let batchSize = 1_000

        init(connection: PGConnectionString) throws(UserError) {
            let listener = PGConnection(conninfo: connection.value, server: connection.redacted)
            let state: Lock<State>
            do {
                try listener.connect()
                try listener.execute("LISTEN \(PostgresSchema.channel)", "listening for changes")
                let newest = Int(try listener.query("SELECT COALESCE(MAX(seq), 0) FROM changes", [],
                                                    "reading the change log").first?[0] ?? "0") ?? 0
                state = Lock(State(lastSeq: newest))
            } catch {
                throw error.userError
            }
            self.state = state
            owned = Confined(listener, to: .firstUser)
            handOff = OrderedHandOff { changes in
                let observers = state.withLock { Array($0.observers.values) }
                for change in changes {
                    for observer in observers { observer(change) }
                }
            }
        }

        func stop() {
            stopped.store(true, ordering: .sequentiallyConsistent)
            wake()
            state.withLock { state in
                for continuation in state.eventSubscribers.values { continuation.finish() }
            }
        }

        private func wake() {
            wakePipe.wake()
        }

        func observe(_ handler: @escaping @Sendable (CommittedChange) -> Void) -> Int {
            state.withLock { state in
                state.nextID += 1
                state.observers[state.nextID] = handler
                return state.nextID
            }
        }

        func unobserve(_ id: Int) {
            _ = state.withLock { $0.observers.removeValue(forKey: id) }
        }

        func events() -> AsyncStream<Event> {
            let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
            let id = state.withLock { state in
                state.nextID += 1
                state.eventSubscribers[state.nextID] = continuation
                return state.nextID
            }
            continuation.onTermination = { [weak self] _ in
                _ = self?.state.withLock { $0.eventSubscribers.removeValue(forKey: id) }
            }
            return stream
        }

        private func emit(_ event: Event) {
            let subscribers = state.withLock { Array($0.eventSubscribers.values) }
            for continuation in subscribers { continuation.yield(event) }
        }

        /// A commit of this process's repository (any thread).
        func committedHere(_ commit: PostgresCommit) {
            let delivered = state.withLock { state -> Bool in
                guard let change = commit.change else { return false }  // an import: read the log
                guard commit.seq == state.lastSeq + 1 else { return commit.seq <= state.lastSeq }
                state.lastSeq = commit.seq
                handOff.take(CommittedChange(change, seq: commit.seq))
                return true
            }
            handOff.handOut()
            if !delivered {
                nudged.store(true, ordering: .sequentiallyConsistent)
                wake()
            }
        }

        // MARK: on the feed thread

        func run() {
            var backoff = Duration.milliseconds(100)
            var connected = true
            while !stopped.load(ordering: .sequentiallyConsistent) {
                if !connected {
                    do {
                        try listener.connect()
                        try listener.execute("LISTEN \(PostgresSchema.channel)", "listening for changes")
                        connected = true
                        backoff = .milliseconds(100)
                        emit(.reconnected)
                        try catchUp()
                    } catch {
                        // Lost again before catching up: say so, or the daemon would show it as back.
                        if connected { emit(.disconnected(reason: error.description)) }
                        listener.disconnect()
                        connected = false
                        wakePipe.sleep(backoff)  // or less, when woken to stop
                        backoff = min(backoff * 2, .seconds(5))
                        continue
                    }
                }
                do {
                    let channels = try listener.waitForNotifications(timeout: .seconds(1), wake: wakePipe.readEnd)
                    if nudged.exchange(false, ordering: .sequentiallyConsistent) || !channels.isEmpty {
                        try catchUp()
                    }
                } catch {
                    listener.disconnect()
                    connected = false
                    emit(.disconnected(reason: error.description))
                }
            }
            listener.disconnect()
        }

        /// Reads and delivers every logged change after the last delivered one; when the log
        /// was pruned past that point (this daemon was away too long), skips to the newest
        /// change and delivers (and reports) `.resync` instead. The pruning mark comes in the same round trip.
        private func catchUp() throws(PGError) {
            while true {
                let after = state.withLock { $0.lastSeq }
                let rows = try listener.query("""
                    SELECT s.pruned_through, c.seq, c.kind, c.user_id, c.name, c.email, c.avatar_url, c.version
                    FROM store_state s LEFT JOIN LATERAL (
                        SELECT * FROM changes WHERE seq > $1 ORDER BY seq LIMIT $2
                    ) c ON true
                    """, [String(after), String(Self.batchSize)], "reading the change log").rows
                let pruned = Int(rows.first?[0] ?? "0") ?? 0
                if pruned > after {
                    let newest = Int(try listener.query("SELECT GREATEST(COALESCE(MAX(seq), 0), $1) FROM changes",
                                                        [String(pruned)], "reading the change log").first?[0] ?? "0")
                        ?? pruned
                    state.withLock { state in
                        state.lastSeq = max(state.lastSeq, newest)
                        handOff.take(CommittedChange(.resync, seq: state.lastSeq))
                    }
                    handOff.handOut()
                    emit(.resync)
                    return
                }
                let changes = rows.filter { $0[1] != nil }
                state.withLock { state in
                    for row in changes {
                        guard let seq = Int(row[1] ?? ""), seq > state.lastSeq else { continue }
                        state.lastSeq = seq
                        guard let change = Self.change(Array(row.dropFirst())) else { continue }
                        handOff.take(CommittedChange(change, seq: seq))
                    }
                }
                handOff.handOut()
                if changes.count < Self.batchSize { return }
            }
        }

        private static func change(_ row: [String?]) -> UserChange? {
            // An import's merge (`PostgresImportMerge`): sessions read what they show again, once.
            if row[1] == "reloaded" { return .resync }
            guard let id = UUIDText.parse(row[2] ?? "") else { return nil }
            if row[1] == "removed" { return .removed(id: id) }
            guard let version = Int(row[6] ?? "") else { return nil }
            let user = User(id: id, name: row[3] ?? "", email: row[4] ?? "", avatarURL: row[5], version: version)
            return row[1] == "added" ? .added(user) : .saved(user)
        }
    }
}
