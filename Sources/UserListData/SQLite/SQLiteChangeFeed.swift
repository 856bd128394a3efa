import CSQLite
import Dispatch
import Foundation
import UserListDomain

/// Every committed change to a SQLite store, from any writer, delivered to each subscriber once
/// and in commit order.
///
/// How it knows: triggers append each change (with a snapshot of the row) to the `changes`
/// table inside the writer's own transaction (schema v3), so a change exists in the log if and
/// only if it committed, and `seq` is the commit order (SQLite has one writer at a time). The
/// feed watches the file from a read-only connection of its own:
/// - `PRAGMA data_version` every `pollInterval` (it changes when any *other* connection, in
///   this process or another, commits; reading it costs about a microsecond);
/// - plus an immediate nudge from an observed `SQLiteUserRepository` after each of its writes,
///   so in-process changes do not wait for the next poll.
/// Then it reads the rows after the last `seq` it saw, in batches, and yields them.
///
/// Imports log one row per user (`added` or `saved`; rows an import leaves identical log
/// nothing), so subscribers learn exactly which users changed. An import's rows carry no
/// snapshot: those changes arrive with the user's state when the feed reads them. A
/// million-user import therefore yields a million changes; streams buffer without bound
/// (`.unbounded`) because dropping a change would break the guarantee, so a subscriber must
/// keep reading (the daemon's sessions do; a session that stops listening should cancel its
/// iteration).
///
/// The log is pruned by the writers to the last 10,000 rows, never touching rows younger than a
/// minute: a feed (in any process) that falls more than a minute behind may miss changes; it
/// then delivers `.resync` in their place (it sees the hole in `seq`).
public final class SQLiteChangeFeed: UserChangeFeed, @unchecked Sendable {
    // Invariant that makes it Sendable: every `var` below and `connection` are touched only on
    // `queue` (or in `init`, before `self` is shared).
    private let queue = DispatchQueue(label: "userlistd.sqlite.change-feed")
    private let connection: SQLiteConnection
    private var subscribers: [Int: Subscriber] = [:]
    private var nextSubscriberID = 0
    private var lastSeq: Int
    private var lastDataVersion: Int
    private var timer: (any DispatchSourceTimer)?

    private struct Subscriber {
        let continuation: AsyncStream<UserChange>.Continuation
        /// The last `seq` committed before it subscribed: it sees only later changes.
        let after: Int
    }

    static let batchSize = 1_000

    /// Watches the store at `path`, written by anyone, polling every `pollInterval`.
    public init(path: String, pollInterval: Duration = .milliseconds(25)) throws(UserError) {
        do {
            connection = try SQLiteConnection(path: path, mode: .readOnly, busyTimeoutMilliseconds: 5_000)
            try SQLiteSchema.check(connection)
            lastDataVersion = try connection.integer("PRAGMA data_version", "watching for changes")
            lastSeq = try Self.maxSeq(connection)
        } catch {
            throw error.userError
        }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = DispatchTimeInterval.nanoseconds(Int(pollInterval.components.seconds * 1_000_000_000
                                                            + pollInterval.components.attoseconds / 1_000_000_000))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(5))
        timer.setEventHandler { [weak self] in self?.poll() }
        self.timer = timer
        timer.resume()
    }

    /// Watches `repository`'s file and, besides polling, hears of its writes at once.
    public convenience init(observing repository: SQLiteUserRepository, pollInterval: Duration = .milliseconds(25)) throws(UserError) {
        try self.init(path: repository.path, pollInterval: pollInterval)
        repository.onCommit { [weak self] in self?.nudge() }
    }

    deinit {
        timer?.cancel()
        for subscriber in subscribers.values { subscriber.continuation.finish() }
    }

    public func subscribe() -> AsyncStream<UserChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: UserChange.self, bufferingPolicy: .unbounded)
        let id: Int = queue.sync {
            let id = nextSubscriberID
            nextSubscriberID += 1
            // What is committed now is "before": start after the newest row, even if the poll
            // has not read up to it yet.
            let after = max(lastSeq, (try? Self.maxSeq(connection)) ?? lastSeq)
            subscribers[id] = Subscriber(continuation: continuation, after: after)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.queue.async { self.subscribers[id] = nil }
        }
        return stream
    }

    /// Asks for an immediate read of the log (after a write in this process).
    func nudge() {
        queue.async { self.deliver() }
    }

    // MARK: on `queue`

    private func poll() {
        guard let version = try? connection.integer("PRAGMA data_version", "watching for changes"),
              version != lastDataVersion else { return }
        lastDataVersion = version
        deliver()
    }

    private func deliver() {
        do {
            guard !subscribers.isEmpty else {
                lastSeq = try Self.maxSeq(connection)
                return
            }
            var read = Self.batchSize
            while read == Self.batchSize {
                // Trigger rows carry a snapshot (version is set); import rows do not, so the
                // user's current row stands in (a later change row follows if it changed again).
                let statement = try connection.statement("""
                    SELECT c.seq, c.kind, c.user_id,
                           COALESCE(c.name, u.name), COALESCE(c.email, u.email),
                           CASE WHEN c.version IS NULL THEN u.avatar_url ELSE c.avatar_url END,
                           COALESCE(c.version, u.version)
                    FROM changes c LEFT JOIN users u ON c.version IS NULL AND u.id = c.user_id
                    WHERE c.seq > ?1 ORDER BY c.seq LIMIT ?2
                    """)
                defer { statement.reset() }
                statement.bind(1, lastSeq)
                statement.bind(2, Self.batchSize)
                read = 0
                while try statement.step("reading the change log") {
                    read += 1
                    let seq = statement.int(0)
                    if seq > lastSeq + 1 {
                        // `seq` has no gaps (AUTOINCREMENT, one writer): the rows between were
                        // pruned before this feed read them. Say so rather than skip them silently.
                        for subscriber in subscribers.values where seq - 1 > subscriber.after {
                            subscriber.continuation.yield(.resync)
                        }
                    }
                    lastSeq = seq
                    guard let change = Self.change(from: statement) else { continue }
                    for subscriber in subscribers.values where seq > subscriber.after {
                        subscriber.continuation.yield(change)
                    }
                }
            }
        } catch {
            // The file is unreadable right now (e.g. removed, I/O error): try again next poll.
            // Nothing is lost; `lastSeq` only advances past rows that were delivered.
        }
    }

    private static func change(from row: SQLiteStatement) -> UserChange? {
        guard let id = UUID(uuidString: row.text(2)) else { return nil }
        let kind = row.text(1)
        if kind == "removed" { return .removed(id: id) }
        guard !row.isNull(6) else { return nil }  // imported, then removed: the removal follows
        let user = User(id: id, name: row.text(3), email: row.text(4), avatarURL: row.optionalText(5), version: row.int(6))
        return kind == "added" ? .added(user) : .saved(user)
    }

    private static func maxSeq(_ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        try connection.integer("SELECT COALESCE(MAX(seq), 0) FROM changes", "reading the change log")
    }
}
