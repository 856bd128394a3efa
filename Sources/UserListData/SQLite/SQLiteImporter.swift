import CSQLite
import Foundation
import UserListDomain

extension SQLiteUserRepository {
    /// A user to import with its sort and search keys, folded before the import takes the
    /// writer: folding costs about as much as inserting, and another client's save waiting for
    /// the writer should not wait for it.
    struct KeyedUser: Sendable {
        let user: User
        let keys: (name: String, email: String)

        init(_ user: User) {
            self.user = user
            keys = (UserKey.fold(user.name), UserKey.fold(user.email))
        }

        /// Every user's keys; a big import's on all cores.
        static func folding(_ users: [User]) -> [KeyedUser] {
            let fold: @Sendable (Int, User) -> KeyedUser = { _, user in KeyedUser(user) }
            return users.count < foldInParallelFrom ? users.enumerated().map(fold) : ParallelMap.map(users, fold)
        }

        static let foldInParallelFrom = 10_000
    }

    /// Writes an import's users one by one inside `upsert`'s transaction, with the triggers on
    /// `users` dropped: it logs each change and keeps the search index itself.
    struct Importer {
        let connection: SQLiteConnection
        /// The search index's mark: users past it are the catch-up's (see `SQLiteSearchIndex`).
        let indexedThrough: Int64
        let keepChanges: Bool
        private let insert, stored, update, log, searchAdd, searchDelete, stale: SQLiteStatement
        /// The import's history entry, and its statement for each user's part (`SQLiteHistoryBatch`).
        private let historyEntry: Int64?
        private let part: SQLiteStatement?
        private let now = Int(Date().timeIntervalSince1970)
        private(set) var inserted = 0
        private(set) var updated = 0
        private(set) var changes: [(change: UserChange, seq: Int)] = []

        static let operation = "importing users"

        init(_ connection: SQLiteConnection, keepChanges: Bool, historyEntry: Int64? = nil) throws(SQLiteError) {
            self.connection = connection
            self.historyEntry = historyEntry
            part = historyEntry == nil ? nil : try connection.statement(SQLiteHistoryBatch.insertPart)
            indexedThrough = try SQLiteSearchIndex.indexedThrough(connection, Self.operation).map(Int64.init) ?? .max
            self.keepChanges = keepChanges
            insert = try connection.statement("""
                INSERT INTO users (id, name, email, avatar_url, version, name_key, email_key)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO NOTHING
                """)
            stored = try connection.statement(
                "SELECT rowid, name, email, avatar_url, version, name_key, email_key FROM users WHERE id = ?1")
            update = try connection.statement("""
                UPDATE users SET name = ?2, email = ?3, avatar_url = ?4, version = ?5, name_key = ?6, email_key = ?7
                WHERE rowid = ?1
                """)
            log = try connection.statement("INSERT INTO changes (kind, user_id, at) VALUES (?1, ?2, ?3)")
            searchAdd = try connection.statement("INSERT INTO users_search (rowid, key) VALUES (?1, ?2)")
            searchDelete = try connection.statement(
                "INSERT INTO users_search (users_search, rowid, key) VALUES ('delete', ?1, ?2)")
            stale = try connection.statement(SQLiteSearchIndex.staleEntry("?1"))
        }

        /// Inserts `user`, or updates the stored user with its id. A user whose data changes gets
        /// a new version (past the stored one, or the imported one if higher), so open screens
        /// follow it and a save made from an older version is a conflict; an import with the same
        /// data only ever raises the version, and identical data is not written at all. (A staged
        /// import is merged set-based, with its own version rules: `SQLiteImportMerge`.)
        mutating func write(_ keyed: KeyedUser) throws(SQLiteError) {
            let (user, keys) = (keyed.user, keyed.keys)
            SQLiteUserRepository.bindRow(insert, user, keys: keys)
            try SQLiteUserRepository.refusingDuplicateEmail(user, connection,
                                                            Self.operation) { () throws(SQLiteError) in
                try insert.run(Self.operation)
            }
            if connection.changes == 1 {
                inserted += 1
                let rowid = sqlite3_last_insert_rowid(connection.handle)
                if try !leftToCatchUp(rowid) { try index(rowid: rowid, keys) }
                try logged("added", .added(user), id: user.id)
                try recordPart("added", user, before: nil)
                return
            }
            stored.bind(1, user.id)
            guard try stored.step(Self.operation) else {
                stored.reset()
                throw .custom("user \(user.id) was neither inserted nor found", code: SQLITE_INTERNAL,
                              path: connection.path, operation: Self.operation)
            }
            let rowid = sqlite3_column_int64(stored.handle, 0)
            let old = (name: stored.text(1), email: stored.text(2), avatarURL: stored.optionalText(3),
                       version: stored.int(4), nameKey: stored.text(5), emailKey: stored.text(6))
            stored.reset()
            let changed = user.name != old.name || user.email != old.email || user.avatarURL != old.avatarURL
            guard changed || user.version > old.version else { return }  // identical: nothing to write or tell
            var saved = user
            saved.version = changed ? max(old.version + 1, user.version) : user.version
            // An unchanged email keeps its stored key (see SQLiteSchema.v4).
            let newKeys = (name: keys.name, email: user.email == old.email ? old.emailKey : keys.email)
            update.bind(1, Int(rowid))
            SQLiteUserRepository.bindRow(update, saved, keys: newKeys, skippingID: true)
            try SQLiteUserRepository.refusingDuplicateEmail(user, connection,
                                                            Self.operation) { () throws(SQLiteError) in
                try update.run(Self.operation)
            }
            updated += 1
            if newKeys.name != old.nameKey || newKeys.email != old.emailKey, try !leftToCatchUp(rowid) {
                searchDelete.bind(1, Int(rowid))
                searchDelete.bind(2, SQLiteSearchIndex.key(name: old.nameKey, email: old.emailKey))
                try searchDelete.run(Self.operation)
                try index(rowid: rowid, newKeys)
            }
            try logged("saved", .saved(saved), id: user.id)
            let before = UserFields(name: old.name, email: old.email, avatarURL: old.avatarURL)
            try recordPart("saved", saved, before: before)
        }

        /// The user's part of the import's entry: what it was before, the version it has now.
        private func recordPart(_ kind: String, _ user: User, before: UserFields?) throws(SQLiteError) {
            guard let part, let historyEntry else { return }
            part.bind(1, Int(historyEntry))
            part.bind(2, user.id)
            part.bind(3, kind)
            part.bind(4, before?.name)
            part.bind(5, before?.email)
            part.bind(6, before?.avatarURL)
            part.bind(7, user.version)
            try part.run(Self.operation)
        }

        /// Whether the catch-up owns `rowid`'s search entry: past the mark, or stale.
        private func leftToCatchUp(_ rowid: Int64) throws(SQLiteError) -> Bool {
            guard rowid <= indexedThrough else { return true }
            guard indexedThrough != .max else { return false }  // no backlog: nothing is stale
            stale.bind(1, Int(rowid))
            defer { stale.reset() }
            return try stale.step(Self.operation)
        }

        private func index(rowid: Int64, _ keys: (name: String, email: String)) throws(SQLiteError) {
            searchAdd.bind(1, Int(rowid))
            searchAdd.bind(2, SQLiteSearchIndex.key(name: keys.name, email: keys.email))
            try searchAdd.run(Self.operation)
        }

        private mutating func logged(_ kind: String, _ change: UserChange, id: UUID) throws(SQLiteError) {
            log.bind(1, kind)
            log.bind(2, id)
            log.bind(3, now)
            try log.run(Self.operation)
            if keepChanges { changes.append((change, Int(sqlite3_last_insert_rowid(connection.handle)))) }
        }
    }
}
