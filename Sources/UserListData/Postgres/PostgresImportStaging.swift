import Foundation
import ThreadLocks
import UserListDomain

/// The PostgreSQL store's all-or-nothing import (`ImportStaging`), durable like SQLite's
/// (`SQLiteImportStaging`): entries are streamed with `COPY ... FROM STDIN` into
/// `import_staged` (no index: it costs what COPY costs and never touches `users`), and applied
/// by one merge (`PostgresImportMerge`) at the commit.
///
/// The commit marks the import `committed` in its own transaction, then merges. From that mark
/// on the import belongs to the database: a daemon that dies before the merge's commit leaves
/// it to whichever daemon opens the database next (`recover`). Between the mark and the end of
/// the merge the committing connection holds a session advisory lock on the import
/// (`importLock`, id): a daemon opening meanwhile skips it rather than merging it twice, and a
/// dead daemon's lock goes with its connection.
///
/// Several daemons share the database, so an import still `staging` at open may be another live
/// daemon's: only one untouched for `abandonedAfterSeconds` (its client, or its daemon, has
/// been gone that long) is dropped, at open and at every `beginImport`.
struct PostgresImportStaging: ImportStaging {
    let repository: PostgresUserRepository

    static let operation = "staging an import"
    /// `pg_advisory_lock(importLock, id)`'s first key ("ulim").
    static let importLock = 0x756C_696D
    static let abandonedAfterSeconds = 3_600

    static let stagedColumns = "import_id, position, id, name, email, avatar_url, expected_version, name_key, email_key"

    func beginImport() async throws(UserError) -> ImportToken {
        let id = try await repository.perform { connection throws(PGError) -> String in
            try connection.transaction(Self.operation) { () throws(PGError) -> String in
                try Self.drop(abandoned: true, connection)
                return try connection.query("INSERT INTO imports (state) VALUES ('staging') RETURNING id", [],
                                            Self.operation).first?[0] ?? "0"
            }
        }
        return ImportToken(id)
    }

    func stage(_ entries: [ImportEntry], into token: ImportToken) async throws(UserError) -> Int {
        let id = try Self.id(token)
        // Encoded here, before the turn: the previous chunk's COPY runs meanwhile.
        var data = [UInt8]()
        data.reserveCapacity(entries.count * 160)
        for entry in entries {
            let user = entry.user
            data.append(contentsOf: String(id).utf8)
            PGCopyText.append(field: entry.position, to: &data)
            PGCopyText.append(field: user.id, to: &data)
            PGCopyText.append(field: user.name, to: &data)
            PGCopyText.append(field: user.email, to: &data)
            PGCopyText.append(field: user.avatarURL, to: &data)
            PGCopyText.append(field: entry.expectedVersion.map { String($0) }, to: &data)
            PGCopyText.append(field: UserKey.fold(user.name), to: &data)
            PGCopyText.append(field: UserKey.fold(user.email), to: &data)
            data.append(0x0A)
        }
        let (rows, encoded) = (entries.count, data)
        // One chunk at a time per daemon: the others' saves keep the pool's other connections.
        await repository.stagingTurns.enter()
        let count: Int?
        do {
            count = try await repository.perform { connection throws(PGError) -> Int? in
                try Self.copy(encoded, rows: rows, into: id, connection)
            }
        } catch {
            await repository.stagingTurns.leave()
            throw error
        }
        await repository.stagingTurns.leave()
        guard let count else { throw ImportStagingError.unknown(token) }
        return count
    }

    /// COPYs `data` (`rows` rows) and counts them in `imports`, in one transaction; nil (rolled
    /// back) when import `id` is not staging. The count comes after the COPY, so the import's row is
    /// locked only for the commit, not while the rows stream.
    private static func copy(_ data: [UInt8], rows: Int, into id: Int,
                             _ connection: PGConnection) throws(PGError) -> Int? {
        do {
            return try connection.transaction(operation) { () throws(PGError) -> Int? in
                try connection.copyIn("COPY import_staged (\(stagedColumns)) FROM STDIN", data: data, operation)
                guard let count = try connection.query("""
                    UPDATE imports SET entries = entries + $2, touched_at = now()
                    WHERE id = $1 AND state = 'staging' RETURNING entries
                    """, [String(id), String(rows)], operation).first?[0].flatMap({ Int($0) }) else {
                    // Rolls the COPY back.
                    throw PGError(sqlState: notStaging, detail: "no such import", server: "", operation: operation)
                }
                return count
            }
        } catch where error.sqlState == notStaging {
            return nil
        }
    }

    /// Not a server's SQLSTATE: `copy`'s way out of its transaction.
    private static let notStaging = "ULNIS"

    func commitImport(_ token: ImportToken, by author: ChangeAuthor?) async throws(UserError) -> ImportSummary {
        let id = try Self.id(token)
        let authorJSON = author.flatMap { try? JSONEncoder().encode($0.via(.import)) }
            .map { String(decoding: $0, as: UTF8.self) }
        // nil: no such import; `finished` false: a store failure, the import stays committed.
        typealias Merged = (result: Result<PostgresImportMerge.Outcome, UserError>, finished: Bool)
        let result: Merged?
        do {
            result = try await repository.pool.perform({ connection throws(PGError) -> Merged? in
                let lockKey = [String(Self.importLock), String(id)]
                try connection.query("SELECT pg_advisory_lock($1, $2)", lockKey, Self.operation)
                defer { _ = try? connection.query("SELECT pg_advisory_unlock($1, $2)", lockKey, Self.operation) }
                let marked = try connection.query("""
                    UPDATE imports SET state = 'committed', author = $2, touched_at = now()
                    WHERE id = $1 AND state = 'staging'
                    """, [String(id), authorJSON], Self.operation).affected == 1
                guard marked else { return nil }
                do throws(PGError) {
                    return (try PostgresImportMerge.run(id, connection), true)
                } catch {
                    // A store failure, not a refused entry: the import stays committed for the next open.
                    return (.failure(.importKept(reason: "PostgreSQL at \(error.server) went away while the import "
                        + "was being applied (\(error.oneLineDetail)). The import was accepted whole: it is "
                        + "applied once the database is back; there is nothing to do.")), false)
                }
            }, after: { connection, merged in
                // After the reply: nobody waits for it. A failure is left to the next open's sweep.
                guard let merged, merged.finished else { return }
                let entries = (try? merged.result.get())?.read ?? 0
                try? PostgresImportCleanup.run(id, entries: entries, connection)
            })
        } catch {
            throw error.userError
        }
        guard let (merged, finished) = result else { throw ImportStagingError.unknown(token) }
        if !finished { repository.finishCommittedImportsSoon() }
        let outcome = try merged.get()
        if outcome.written > 0 { repository.notifyCommitted(PostgresCommit(seq: 0, change: nil)) }
        return ImportSummary(read: outcome.read, written: outcome.written)
    }

    func abortImport(_ token: ImportToken) async {
        guard let id = try? Self.id(token) else { return }
        _ = try? await repository.perform { connection throws(PGError) in
            try connection.transaction(Self.operation) { () throws(PGError) in
                try Self.drop(id: id, onlyStaging: true, connection)
            }
        }
    }

    /// At open, before anything is served: finishes the committed imports no live daemon is
    /// merging (cleaning each up at once: nobody waits), drops the staging ones abandoned for an
    /// hour, and the staged rows of imports already gone (`PostgresImportCleanup.sweep`).
    static func recover(_ connection: PGConnection) throws(PGError) {
        try connection.transaction(operation) { () throws(PGError) in try drop(abandoned: true, connection) }
        try PostgresImportCleanup.sweep(connection)
        try finishCommitted(waiting: recoveryLockWait, connection)
    }

    /// Finishes the committed imports no daemon is merging: at open, and when the database is
    /// back after an outage cut a merge short (its client was told a daemon would finish it; at
    /// once, before people edit its users, rather than at some daemon's next start).
    static func finishCommitted(waiting seconds: Int, _ connection: PGConnection) throws(PGError) {
        let ids = try connection.query("SELECT id FROM imports WHERE state = 'committed' ORDER BY id", [],
                                       operation).rows.compactMap { $0[0].flatMap { Int($0) } }
        for id in ids {
            guard try lock(id, waiting: seconds, connection) else { continue }  // a live daemon is merging it
            defer {
                _ = try? connection.query("SELECT pg_advisory_unlock($1, $2)", [String(importLock), String(id)],
                                          operation)
            }
            // A refused entry drops the import (its client is gone; nothing was written).
            let merged = try PostgresImportMerge.run(id, connection)
            try PostgresImportCleanup.run(id, entries: (try? merged.get())?.read ?? 0, connection)
        }
    }

    /// How long an opening daemon waits for an import's lock: a daemon killed mid-merge leaves
    /// its backend running until it notices (`client_connection_check_interval`, 2 s), then the
    /// lock is free; a live daemon's merge takes longer, and finishes the import itself.
    static let recoveryLockWait = 15

    /// Takes import `id`'s session lock, waiting up to `seconds` (0: not at all); false when
    /// another holds it.
    static func lock(_ id: Int, waiting seconds: Int, _ connection: PGConnection) throws(PGError) -> Bool {
        if seconds == 0 {  // a `lock_timeout` of 0 would wait for ever
            return try connection.query("SELECT pg_try_advisory_lock($1, $2)", [String(importLock), String(id)],
                                        operation).first?[0] == "t"
        }
        do {
            try connection.execute("SET lock_timeout = '\(seconds)s'", operation)
            defer { _ = try? connection.execute("SET lock_timeout = 0", operation) }
            try connection.query("SELECT pg_advisory_lock($1, $2)", [String(importLock), String(id)], operation)
            return true
        } catch where error.sqlState == "55P03" {
            return false
        }
    }

    /// Drops staging imports untouched for `abandonedAfterSeconds` and their entries.
    static func drop(abandoned: Bool, _ connection: PGConnection) throws(PGError) {
        let condition = "state = 'staging' AND touched_at < now() - make_interval(secs => \(abandonedAfterSeconds))"
        try connection.execute("""
            DELETE FROM import_staged WHERE import_id IN (SELECT id FROM imports WHERE \(condition));
            DELETE FROM imports WHERE \(condition);
            """, operation)
    }

    /// Drops import `id` (only while still staging, with `onlyStaging`) and its entries.
    static func drop(id: Int, onlyStaging: Bool, _ connection: PGConnection) throws(PGError) {
        let gone = try connection.query("DELETE FROM imports WHERE id = $1"
                                        + (onlyStaging ? " AND state = 'staging'" : ""), [String(id)], operation)
        if gone.affected > 0 {
            try connection.query("DELETE FROM import_staged WHERE import_id = $1", [String(id)], operation)
        }
    }

    static func id(_ token: ImportToken) throws(UserError) -> Int {
        guard let id = Int(token.rawValue), id > 0 else { throw ImportStagingError.unknown(token) }
        return id
    }
}

extension PostgresUserRepository {
    public var importStaging: (any ImportStaging)? { PostgresImportStaging(repository: self) }

    /// The database is back after an outage: finishes the imports it cut short
    /// (`PostgresImportStaging.finishCommitted`); one another daemon is merging is left to it.
    public func finishCommittedImports() async throws(UserError) {
        try await perform { connection throws(PGError) in
            // The pool's connection may be one the outage broke: once more on a fresh one.
            try connection.read { () throws(PGError) in
                try PostgresImportStaging.finishCommitted(waiting: 0, connection)
            }
        }
    }

    /// A merge cut short by a store failure (its client was told the import is kept): finishes
    /// it as soon as a connection can, trying 1, 2, 4 … 30 s apart. The feed's reconnect after
    /// an outage does the same; this covers a merge whose connection alone was lost (a backend
    /// terminated, the database still up), which no reconnect announces. Whichever runs first
    /// finishes it; the other finds it gone.
    func finishCommittedImportsSoon() {
        Task.detached(priority: .utility) { [weak self] in
            var delay = 1
            while true {
                try? await Task.sleep(for: .seconds(delay))
                guard let self else { return }
                do throws(UserError) {
                    try await self.finishCommittedImports()
                    return
                } catch {
                    delay = min(delay * 2, 30)
                }
            }
        }
    }

    /// Runs `body` on a pool connection (no transaction of its own), mapping errors.
    func perform<T: Sendable>(
        _ body: @escaping @Sendable (PGConnection) throws(PGError) -> T
    ) async throws(UserError) -> T {
        do {
            return try await pool.perform(body)
        } catch {
            throw error.userError
        }
    }
}
