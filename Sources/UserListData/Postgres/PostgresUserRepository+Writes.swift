import Foundation
import Synchronization
import UserListDomain
import ThreadLocks

/// Writing users: each write is one transaction on the pool, logged in the change log and the
/// history inside it, and told to the change feed once committed.
extension PostgresUserRepository {
    enum Outcome: Sendable {
        case done(User, seq: Int)
        case conflict(User)
        case notFound
        case emailTaken(String)
        /// A save that would change nothing: no write, no entry, no change; the stored user.
        case unchanged(User)
    }

    /// Runs `body` in a transaction on a pool connection; `body` logs its change last
    /// (`logChange`, which takes the change-log lock: see `PostgresSchema.lockChangeLog`).
    /// A clash on the unique email index comes back as `.emailTaken` (the transaction is rolled
    /// back first), so the caller can look up who has it.
    func write(_ operation: String, _ body: @escaping @Sendable (PGConnection) throws(PGError) -> Outcome,
                       email: String?) async throws(UserError) -> Outcome {
        let receipt = CommitReceipt.current
        do {
            return try await pool.perform { connection throws(PGError) -> Outcome in
                let outcome: Outcome
                do throws(PGError) {
                    outcome = try connection.transaction(operation) { () throws(PGError) -> Outcome in
                        let outcome = try body(connection)
                        // Before COMMIT: the NOTIFY goes out with it, and the feed may read the
                        // row before this thread hears that the commit is done.
                        if case .done(_, let seq) = outcome { receipt?.record(seq) }
                        return outcome
                    }
                } catch where error.isUniqueViolation && error.constraint == "users_email_key_unique" {
                    return .emailTaken(email ?? "")
                }
                if self.writesSincePrune.add(1, ordering: .relaxed).newValue >= Self.pruneEvery {
                    self.writesSincePrune.store(0, ordering: .relaxed)
                    try? Self.prune(connection)
                }
                return outcome
            }
        } catch {
            throw error.userError
        }
    }

    /// The user who already has `email`, as the refusal to report (a validation error: saving
    /// again cannot help).
    private func emailConflict(_ email: String, id: UUID) async throws(UserError) -> UserError {
        let owner = try await read { connection throws(PGError) -> User? in try Self.owner(ofEmail: email, connection) }
        if let owner, owner.id != id { return .duplicateEmail(email: email, other: owner) }
        return .unavailable(reason: "the email \(email) was taken by someone else while saving; try again")
    }

    /// Whether a save of `user` would store what `stored` holds: byte for byte, as the
    /// database compares text (Swift's `==` would take two Unicode forms of a name as equal).
    static func sameFields(_ stored: User, _ user: User) -> Bool {
        stored.name.utf8.elementsEqual(user.name.utf8) && stored.email.utf8.elementsEqual(user.email.utf8)
            && stored.avatarURL.map { Array($0.utf8) } == user.avatarURL.map { Array($0.utf8) }
    }

    /// Logs a write's change (its `seq`) under the change-log lock, once its rows are written.
    static func logChange(_ kind: String, id: UUID, user: User?, _ connection: PGConnection,
                          _ operation: String) throws(PGError) -> Int {
        try PostgresSchema.lockChangeLog(connection, operation)
        let seq = try connection.query("""
            INSERT INTO changes (kind, user_id, name, email, avatar_url, version)
            VALUES ($1, $2, $3, $4, $5, $6) RETURNING seq
            """, [kind, id.uuidString, user?.name, user?.email, user?.avatarURL, user.map { String($0.version) }],
            operation)
        try connection.query("SELECT pg_notify($1, '')", [PostgresSchema.channel], operation)
        return Int(seq.first?[0] ?? "0") ?? 0
    }

    public func update(_ user: User) async throws(UserError) -> User { try await update(user, by: .unattributed) }
    public func add(_ new: NewUser) async throws(UserError) -> User { try await add(new, by: .unattributed) }
    public func remove(id: UUID) async throws(UserError) { try await remove(id: id, by: .unattributed) }

    /// Saves `user` and records `author`'s entry in the same transaction (`PostgresHistory`).
    /// A save equal to the stored row writes nothing and answers with the stored user.
    public func update(_ user: User, by author: ChangeAuthor) async throws(UserError) -> User {
        let outcome = try await write("saving a user", { connection throws(PGError) -> Outcome in
            let operation = "saving a user"
            // The row locked first: the version check, the entry's "before" and the write see one
            // stored user, and a save that loses a race to another writes and records nothing.
            guard let stored = try Self.stored(id: user.id, locking: true, connection) else { return .notFound }
            guard stored.version == user.version else { return .conflict(stored) }
            guard !Self.sameFields(stored, user) else { return .unchanged(stored) }
            var saved = user
            saved.version += 1
            try connection.query("""
                UPDATE users SET name = $1, email = $2, avatar_url = $3, name_key = $4, email_key = $5, version = $6
                WHERE id = $7
                """, [user.name, user.email, user.avatarURL, UserKey.fold(user.name), UserKey.fold(user.email),
                      String(saved.version), user.id.uuidString], operation)
            try PostgresHistory.record("saved", id: user.id, before: stored, after: saved, author, connection,
                                       operation)
            let seq = try Self.logChange("saved", id: user.id, user: saved, connection, operation)
            return .done(saved, seq: seq)
        }, email: user.email)
        switch outcome {
        case .done(let saved, let seq):
            notifyCommitted(PostgresCommit(seq: seq, change: .saved(saved)))
            return saved
        case .unchanged(let stored): return stored
        case .conflict(let stored): throw .conflict(stored: stored)
        case .notFound: throw .notFound(id: user.id)
        case .emailTaken(let email): throw try await emailConflict(email, id: user.id)
        }
    }

    /// A user whose id is already stored is refused as `.conflict(stored:)`, like SQLite; so is
    /// an email another user has (case-insensitively), carrying that other user.
    /// An id removed before comes back with the version after its last one, as on SQLite.
    public func add(_ new: NewUser, by author: ChangeAuthor) async throws(UserError) -> User {
        let outcome = try await write("adding a user", { connection throws(PGError) -> Outcome in
            let operation = "adding a user"
            let last = try connection.query("""
                SELECT GREATEST((SELECT max(version_after) FROM history WHERE user_id = $1),
                                (SELECT max(version_after) FROM history_parts WHERE user_id = $1), 0)
                """, [new.id.uuidString], operation).first?[0].flatMap { Int($0) } ?? 0
            let user = User(id: new.id, name: new.name, email: new.email, avatarURL: new.avatarURL, version: last + 1)
            let inserted = try connection.query("""
                INSERT INTO users (id, name, email, avatar_url, version, name_key, email_key)
                VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING
                """, [user.id.uuidString, user.name, user.email, user.avatarURL, String(user.version),
                      UserKey.fold(user.name), UserKey.fold(user.email)],
                operation)
            guard inserted.affected == 1 else {
                return try Self.stored(id: user.id, connection).map(Outcome.conflict) ?? .notFound
            }
            try PostgresHistory.record("added", id: user.id, before: nil, after: user, author, connection, operation)
            let seq = try Self.logChange("added", id: user.id, user: user, connection, operation)
            try connection.query("UPDATE store_state SET user_count = user_count + 1", [], operation)  // under the lock
            return .done(user, seq: seq)
        }, email: new.email)
        switch outcome {
        case .done(let saved, let seq):
            notifyCommitted(PostgresCommit(seq: seq, change: .added(saved)))
            return saved
        case .conflict(let stored): throw .conflict(stored: stored)
        case .notFound, .unchanged:
            throw .unavailable(reason: "\(connection.redacted): the new user was neither added nor found")
        case .emailTaken(let email): throw try await emailConflict(email, id: new.id)
        }
    }

    public func remove(id: UUID, by author: ChangeAuthor) async throws(UserError) {
        let outcome = try await write("removing a user", { connection throws(PGError) -> Outcome in
            let operation = "removing a user"
            // What the DELETE removed (the latest row, after any save it waited for) is the entry's "before".
            guard let removed = try connection.query("DELETE FROM users WHERE id = $1 RETURNING \(Self.columns)",
                                                     [id.uuidString], operation).first.map({ Self.user($0) })
            else { return .notFound }
            try PostgresHistory.record("removed", id: id, before: removed, after: nil, author, connection, operation)
            let seq = try Self.logChange("removed", id: id, user: nil, connection, operation)
            try connection.query("UPDATE store_state SET user_count = user_count - 1", [], operation)  // under the lock
            return .done(User(id: id, name: "", email: ""), seq: seq)
        }, email: nil)
        switch outcome {
        case .done(_, let seq): notifyCommitted(PostgresCommit(seq: seq, change: .removed(id: id)))
        default: throw .notFound(id: id)
        }
    }
}
