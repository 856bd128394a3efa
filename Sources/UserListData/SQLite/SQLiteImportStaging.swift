import CSQLite
import Foundation
import ThreadLocks
import UserListDomain

/// The SQLite store's all-or-nothing import (`ImportStaging`): entries are written as they come
/// into `import_staged`, a table with no index (appending costs a few microseconds a row and
/// never touches `users`), and applied by a merge in slices (`SQLiteImportMerge`) at the commit.
///
/// The commit first marks the import `committed`, durably (synchronous=FULL), with its guard
/// (`SQLiteImportGuard`), then merges in slices. From that mark on the import belongs to the
/// store: a crash before the last slice is finished when the store is next opened (`recover`).
/// An import still `staging` when the store is opened lost its client with the process, and is
/// dropped: nothing of it was written.
///
/// The tables are created when the store opens (`CREATE ... IF NOT EXISTS`), outside the
/// versioned schema: they hold nothing that outlives an import, and older releases ignore them.
struct SQLiteImportStaging: ImportStaging {
    let repository: SQLiteUserRepository

    static let operation = "staging an import"

    static let tables = """
        CREATE TABLE IF NOT EXISTS imports (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: a stale token finds nothing
            state      TEXT NOT NULL CHECK (state IN ('staging', 'committed')),
            entries    INTEGER NOT NULL DEFAULT 0,
            touched_at INTEGER NOT NULL,
            author     TEXT  -- who commits it (JSON of ChangeAuthor), for the history; set at the commit
        );
        CREATE TABLE IF NOT EXISTS import_staged (
            import_id        INTEGER NOT NULL,
            position         INTEGER NOT NULL,
            id               TEXT NOT NULL,
            name             TEXT NOT NULL,
            email            TEXT NOT NULL,
            avatar_url       TEXT,
            expected_version INTEGER,
            name_key         TEXT NOT NULL,
            email_key        TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS import_merge (
            import_id        INTEGER NOT NULL,
            id               TEXT NOT NULL,
            position         INTEGER NOT NULL,
            name             TEXT NOT NULL,
            email            TEXT NOT NULL,
            avatar_url       TEXT,
            expected_version INTEGER,
            name_key         TEXT NOT NULL,
            email_key        TEXT NOT NULL,
            PRIMARY KEY (import_id, id)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS import_emails (
            import_id INTEGER NOT NULL,
            email_key TEXT NOT NULL,
            id        TEXT NOT NULL,
            PRIMARY KEY (import_id, email_key, id)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS import_progress (
            import_id      INTEGER PRIMARY KEY,
            phase          TEXT NOT NULL,  -- sorting, checking, merging, merged, refused
            merged_through TEXT NOT NULL DEFAULT '',  -- the last id merged
            written        INTEGER NOT NULL DEFAULT 0
        );
        """ + SQLiteHistoryBatch.stagingTable

    /// An import that staged nothing for this long lost its client (killed, or gone without
    /// aborting): the next `beginImport` drops it.
    static let abandonedAfterSeconds = 3_600

    func beginImport() async throws(UserError) -> ImportToken {
        let id = try await repository.write({ connection throws(SQLiteError) -> Int in
            try connection.writeTransaction(Self.operation) { () throws(SQLiteError) -> Int in
                let now = Int(Date().timeIntervalSince1970)
                try Self.drop(where: "state = 'staging' AND touched_at < \(now - Self.abandonedAfterSeconds)",
                              connection)
                try connection.execute("INSERT INTO imports (state, touched_at) VALUES ('staging', \(now))",
                                       Self.operation)
                return Int(sqlite3_last_insert_rowid(connection.handle))
            }
        }, committed: { _ in nil })
        return ImportToken(String(id))
    }

    func stage(_ entries: [ImportEntry], into token: ImportToken) async throws(UserError) -> Int {
        let id = try Self.id(token)
        let keyed = entries.map { (entry: $0, keys: (UserKey.fold($0.user.name), UserKey.fold($0.user.email))) }
        let normal = repository.options.synchronous.rawValue
        // One slice at a time in the writer's queue (`BulkWriteGate`): a client keeps several
        // chunks in flight, and a save queued behind four of them waited for all four. Slices of
        // `stageSlice`, each its own transaction, so a save waits for one slice, whatever the
        // client's chunk size (userctl's are up to 3,000 users).
        var count: Int?
        var start = 0
        repeat {
            let slice = Array(keyed[start..<min(keyed.count, start + Self.stageSlice)])
            start += slice.count
            await repository.bulkGate.enter()
            let staged: Result<Int?, UserError>
            do throws(UserError) {
                staged = .success(try await stageNow(slice, id, normal))
            } catch {
                staged = .failure(error)
            }
            await repository.bulkGate.leave()
            count = try staged.get()
            guard count != nil else { throw ImportStagingError.unknown(token) }
        } while start < keyed.count
        return count ?? 0
    }

    /// Entries staged per write transaction.
    static let stageSlice = 1_000

    private func stageNow(_ keyed: [(entry: ImportEntry, keys: (String, String))], _ id: Int,
                          _ normal: String) async throws(UserError) -> Int? {
        try await repository.write({ connection throws(SQLiteError) -> Int? in
            // Not synced one by one: the commit's mark is (FULL), and the WAL keeps commits in
            // order, so every chunk before it is on disk with it. Until then a lost chunk only
            // loses an import that could not have been committed.
            try connection.execute("PRAGMA synchronous = NORMAL", Self.operation)
            defer { _ = try? connection.execute("PRAGMA synchronous = \(normal)", Self.operation) }
            return try connection.writeTransaction(Self.operation) { () throws(SQLiteError) -> Int? in
                let now = Int(Date().timeIntervalSince1970)
                let touched = try connection.statement(
                    "UPDATE imports SET entries = entries + ?2, touched_at = ?3 "
                    + "WHERE id = ?1 AND state = 'staging' RETURNING entries")
                defer { touched.reset() }
                touched.bind(1, id)
                touched.bind(2, keyed.count)
                touched.bind(3, now)
                guard try touched.step(Self.operation) else { return nil }
                let count = touched.int(0)
                touched.reset()
                let insert = try connection.statement("""
                    INSERT INTO import_staged (import_id, position, id, name, email, avatar_url, expected_version,
                                               name_key, email_key)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                    """)
                for (entry, keys) in keyed {
                    insert.bind(1, id)
                    insert.bind(2, entry.position)
                    insert.bind(3, entry.user.id)
                    insert.bind(4, entry.user.name)
                    insert.bind(5, entry.user.email)
                    insert.bind(6, entry.user.avatarURL)
                    if let version = entry.expectedVersion { insert.bind(7, version) } else {
                        sqlite3_bind_null(insert.handle, 7)
                    }
                    insert.bind(8, keys.0)
                    insert.bind(9, keys.1)
                    try insert.run(Self.operation)
                }
                return count
            }
        }, committed: { _ in nil })
    }

    func commitImport(_ token: ImportToken, by author: ChangeAuthor?) async throws(UserError) -> ImportSummary {
        let id = try Self.id(token)
        // Kept with the mark, so that a merge finished after a crash is recorded as its author's.
        let authorJSON = author.flatMap { try? JSONEncoder().encode($0.via(.import)) }
            .map { String(decoding: $0, as: UTF8.self) }
        let marked = try await repository.write({ connection throws(SQLiteError) -> Bool in
            try connection.writeTransaction(Self.operation) { () throws(SQLiteError) -> Bool in
                let mark = try connection.statement(
                    "UPDATE imports SET state = 'committed', author = ?2 WHERE id = ?1 AND state = 'staging'")
                defer { mark.reset() }
                mark.bind(1, id)
                mark.bind(2, authorJSON)
                try mark.run(Self.operation)
                guard connection.changes == 1 else { return false }
                try SQLiteImportMerge.begin(id, connection)
                return true
            }
        }, committed: { _ in nil })
        guard marked else { throw ImportStagingError.unknown(token) }
        return try await repository.mergeStagedImport(id)
    }

    func abortImport(_ token: ImportToken) async {
        guard let id = try? Self.id(token) else { return }
        _ = try? await repository.write({ connection throws(SQLiteError) in
            try connection.writeTransaction(Self.operation) { () throws(SQLiteError) in
                try Self.drop(where: "id = \(id) AND state = 'staging'", connection)
            }
        }, committed: { _ in nil })
    }

    /// At open, before anything is served: finishes the imports that were committed, drops the
    /// ones that were not. Returns whether a merge left the search index to catch up.
    static func recover(_ connection: SQLiteConnection) throws(SQLiteError) -> Bool {
        try connection.execute(tables, "creating the import tables")
        try connection.writeTransaction(operation) { () throws(SQLiteError) in
            try drop(where: "state = 'staging'", connection)
        }
        var backlog = false
        let committed = try connection.statement("SELECT id FROM imports WHERE state = 'committed' ORDER BY id")
        var ids: [Int] = []
        while try committed.step(operation) { ids.append(committed.int(0)) }
        committed.reset()
        for id in ids {
            // A refused entry: the import is dropped (its client is gone; nothing was written).
            if case .success(let outcome) = try SQLiteImportMerge.finish(id, connection) {
                backlog = backlog || outcome.leftSearchBacklog
            }
        }
        return backlog
    }

    /// Deletes the imports matching `condition` and their staged entries.
    static func drop(where condition: String, _ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute("""
            DELETE FROM import_staged WHERE import_id IN (SELECT id FROM imports WHERE \(condition));
            DELETE FROM import_merge WHERE import_id IN (SELECT id FROM imports WHERE \(condition));
            DELETE FROM import_emails WHERE import_id IN (SELECT id FROM imports WHERE \(condition));
            DELETE FROM imports WHERE \(condition);
            """, operation)
    }

    static func id(_ token: ImportToken) throws(UserError) -> Int {
        guard let id = Int(token.rawValue), id > 0 else { throw ImportStagingError.unknown(token) }
        return id
    }
}

extension SQLiteUserRepository {
    public var importStaging: (any ImportStaging)? { writer == nil ? nil : SQLiteImportStaging(repository: self) }
}
