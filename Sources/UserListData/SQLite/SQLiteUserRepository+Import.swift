import CSQLite
import Foundation
import Synchronization
import UserListDomain
import ThreadLocks

/// Imports (many users in one transaction) and the rows and emails they check.
extension SQLiteUserRepository {
    /// Runs a write of `user`; when it breaks the unique email index, throws an error naming the
    /// user who has that email (the enclosing transaction then rolls back).
    static func refusingDuplicateEmail(_ user: User, _ connection: SQLiteConnection, _ operation: String,
                                       _ body: () throws(SQLiteError) -> Void) throws(SQLiteError) {
        do {
            try body()
        } catch where error.primaryCode == SQLITE_CONSTRAINT {
            guard let other = try userWithEmailKey(UserKey.fold(user.email), notID: user.id, connection) else {
                throw error
            }
            throw .duplicate(user.email, other: other, path: connection.path, operation: operation)
        }
    }

    /// The user other than `id` whose email folds to `key`, if any.
    static func userWithEmailKey(_ key: String, notID id: UUID,
                                 _ connection: SQLiteConnection) throws(SQLiteError) -> User? {
        let statement = try connection.statement("SELECT \(columns) FROM users WHERE email_key = ?1 AND id != ?2")
        defer { statement.reset() }
        statement.bind(1, key)
        statement.bind(2, id)
        return try statement.step("looking up an email address") ? user(from: statement) : nil
    }

    /// Binds `?1`...`?7` as id, name, email, avatar_url, version, name_key, email_key (`?1` left
    /// alone when `skippingID`: an update by rowid binds it itself).
    static func bindRow(_ statement: SQLiteStatement, _ user: User,
                        keys: (name: String, email: String)? = nil, skippingID: Bool = false, from first: Int32 = 1) {
        if !skippingID { statement.bind(first, user.id) }
        statement.bind(first + 1, user.name)
        statement.bind(first + 2, user.email)
        statement.bind(first + 3, user.avatarURL)
        statement.bind(first + 4, user.version)
        statement.bind(first + 5, keys?.name ?? UserKey.fold(user.name))
        statement.bind(first + 6, keys?.email ?? UserKey.fold(user.email))
    }

    // MARK: bulk

    /// Writes `users` as they are (id, fields and version), inserting new ids and overwriting
    /// stored ones: an upsert by id, in one transaction with reused prepared statements. Rows
    /// that are already identical are not touched (so a second identical import changes nothing
    /// and announces nothing). Returns how many rows were inserted or changed.
    ///
    /// Each inserted or changed user gets a change-log row (`added` or `saved`, without the
    /// snapshot the triggers take: another process's feed reads the user's current row instead),
    /// and this process's feed gets the changes straight from here.
    ///
    /// Either every user is written or, on any failure, none is.
    public func importUsers(_ users: [User]) async throws(UserError) -> Int {
        try await importKeyed(ImportRows(KeyedUser.folding(users)))
    }

    public func importUsers(_ users: [User], by author: ChangeAuthor) async throws(UserError) -> Int {
        try await importKeyed(ImportRows(KeyedUser.folding(users)), by: author)
    }

    /// `importUsers` of users whose keys are folded already, or being folded.
    /// Takes its turn with staged merges: it writes users an import's guard may hold.
    func importKeyed(_ users: ImportRows,
                     by author: ChangeAuthor = ChangeAuthor(uid: nil, via: .import)) async throws(UserError) -> Int {
        await mergeTurns.enter()
        await bulkGate.enter()
        let result: Result<Int, UserError>
        do throws(UserError) {
            await checkpointer?.makeRoom()
            result = .success(try await importNow(users, by: author))
        } catch {
            result = .failure(error)
        }
        await bulkGate.leave()
        await mergeTurns.leave()
        return try result.get()
    }

    func importNow(_ users: ImportRows, by author: ChangeAuthor) async throws(UserError) -> Int {
        let outcome = try await write { connection throws(SQLiteError) -> ImportOutcome in
            let outcome = try Self.upsert(users, connection,
                                          recordingHistoryBy: self.options.recordsImportHistory ? author : nil)
            let now = Int(Date().timeIntervalSince1970)
            if now - self.lastImportPrune.load(ordering: .relaxed) >= Self.importPruneSeconds {
                self.lastImportPrune.store(now, ordering: .relaxed)
                try? Self.prune(connection)
            }
            return outcome
        } committed: { outcome in
            if outcome.written == 0 { return nil }
            return outcome.changes.isEmpty ? .readTheLog : .changes(outcome.changes)
        }
        if outcome.leftSearchBacklog { catchUpSearchIndex() }
        return outcome.written
    }

    /// What an import wrote: how many users, and (for imports up to `directChangesUpTo` users)
    /// each change with its log `seq`, for the feed.
    struct ImportOutcome: Sendable {
        var written = 0
        var changes: [(change: UserChange, seq: Int)] = []
        /// The search index was emptied, for `catchUpSearchIndex` to fill.
        var leftSearchBacklog = false
    }

    /// Imports up to this size hand their changes to the feed directly; bigger ones let it read
    /// the log (holding a million changes in memory twice buys nothing).
    static let directChangesUpTo = 10_000

    /// The import's transaction. Why it drops every trigger on `users` inside the transaction
    /// and keeps the change log and the search index itself: with a trigger, each row's INSERT
    /// becomes a multi-row statement that SQLite wraps in a statement savepoint, and FTS5 flushes
    /// its pending index data at every savepoint, so each row became a segment of its own (about
    /// 60 µs a row at 100,000 users). Without triggers the rows' index data collects in memory
    /// and is written once at commit. No other connection sees the triggers missing: the DDL
    /// commits (or rolls back) with the rows.
    static func upsert(_ users: ImportRows, _ connection: SQLiteConnection,
                       recordingHistoryBy author: ChangeAuthor?) throws(SQLiteError) -> ImportOutcome {
        let operation = "importing users"
        // A big import wants the indexes it updates at random in memory; back to normal after.
        if users.count > 10_000 { try connection.execute("PRAGMA cache_size = -\(importCacheKiB)", operation) }
        defer { _ = try? connection.execute("PRAGMA cache_size = -\(normalCacheKiB)", operation) }
        return try connection.writeTransaction(operation) { () throws(SQLiteError) -> ImportOutcome in
            // The import's one entry first: each user's part names it as it is written.
            let entry = try author.map { author throws(SQLiteError) in
                try SQLiteHistoryBatch.begin(author.via(.import), connection)
            }
            for name in SQLiteSchema.changeLogTriggerNames + SQLiteSearchIndex.triggerNames {
                try connection.execute("DROP TRIGGER IF EXISTS \(name)", operation)
            }
            // Importing more users than are stored: build the secondary indexes afterwards, and
            // leave the search index to catch up once the import is committed.
            let stored = try connection.integer("SELECT user_count FROM store_state WHERE only = 1", operation)
            let rebuild = users.count >= rebuildIndexesFrom && users.count > stored
            if rebuild {
                for index in SQLiteSchema.secondaryIndexes {
                    try connection.execute("DROP INDEX \(index.name)", operation)
                }
                try SQLiteSearchIndex.startOver(connection, operation)
            }
            let keepChanges = users.count <= directChangesUpTo
            var inserted = users.count, updated = 0, changes: [(change: UserChange, seq: Int)] = []
            if rebuild && !keepChanges, try EmptyTableLoad.applies(to: users, connection) {
                try EmptyTableLoad.insert(users, connection)
                if let entry { _ = try SQLiteHistoryBatch.recordEveryUserAdded(entry, connection) }
            } else {
                var importer = try Importer(connection, keepChanges: keepChanges, historyEntry: entry)
                try users.forEach { user throws(SQLiteError) in try importer.write(user) }
                (inserted, updated, changes) = (importer.inserted, importer.updated, importer.changes)
            }
            if rebuild {
                for index in SQLiteSchema.secondaryIndexes {
                    do throws(SQLiteError) {
                        try connection.execute(index.create, operation)
                    } catch where error.code & 0xFF == SQLITE_CONSTRAINT {
                        // Without the unique index nothing stopped two users sharing an email:
                        // say which two, in our words rather than SQLite's. (Looked for only
                        // now: the search costs as much as building the index.)
                        try refuseDuplicateEmails(connection, operation)
                        throw error
                    }
                }
            }
            if let entry {
                try SQLiteHistoryBatch.count(entry, added: inserted, updated: updated, connection)
                try SQLiteHistoryBatch.finish(entry, connection)
            }
            try connection.execute(SQLiteSchema.changeLogTriggers + SQLiteSearchIndex.createTriggers, operation)
            try connection.execute(
                "UPDATE store_state SET user_count = user_count + \(inserted) WHERE only = 1", operation)
            return ImportOutcome(written: inserted + updated, changes: changes, leftSearchBacklog: rebuild)
        }
    }

    /// Throws `duplicate` naming two users that share an email key, if any do.
    static func refuseDuplicateEmails(_ connection: SQLiteConnection, _ operation: String) throws(SQLiteError) {
        let statement = try connection.statement("""
            SELECT \(columns) FROM users WHERE email_key IN
                (SELECT email_key FROM users GROUP BY email_key HAVING COUNT(*) > 1 LIMIT 1)
            ORDER BY rowid LIMIT 2
            """)
        defer { statement.reset() }
        guard try statement.step(operation) else { return }
        let first = user(from: statement)
        guard try statement.step(operation) else { return }
        let second = user(from: statement)
        throw .duplicate(second.email, other: first, path: connection.path, operation: operation)
    }

    /// Removes `id` if present; no error when it is not (the cache's reconciliation).
    func removeIfPresent(id: UUID) async throws(UserError) {
        do { try await remove(id: id) } catch .notFound { return }
    }
}
