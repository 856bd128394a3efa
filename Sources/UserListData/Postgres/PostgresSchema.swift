import Foundation

/// The PostgreSQL store's schema, versioned in `userlist_schema` and migrated forward step by
/// step, each step in its own transaction, all under a session advisory lock: two daemons that
/// start together take turns, and the second finds the work done.
///
/// - v1: `users` with the Swift-folded `name_key` and `email_key` (`UserKey.fold`) in the "C"
///   collation (byte order of UTF-8, which is code-point order: the order SQLite's BINARY
///   collation gives), a btree `(name_key, id)` for keyset pages and prefix search, a unique
///   btree on `email_key` (emails are unique case-insensitively, and it serves email prefixes),
///   `pg_trgm` GIN indexes on both keys for substring search; the `changes` log behind
///   `PostgresChangeFeed` and `store_state` (row count, how far the log was pruned, and which
///   `UserKey.fold` computed the keys: see `rekeyIfFoldChanged`).
/// - v2: `history` (`PostgresHistory`), who changed which user and how, shared by every daemon
///   on the database and pruned by its own retention, never by the change log's.
/// - v3: durable import staging (`PostgresImportSchema`), and a `reloaded` change-log kind: a
///   merged import is one row, which every feed hands its sessions as `UserChange.resync`.
/// - v4: an import is one history entry, with a slim part per user (`PostgresHistoryBatch`).
enum PostgresSchema {
    static let currentVersion = 4
    /// `pg_advisory_lock` key for migrations ("ulsm").
    static let migrationLock = 0x756C_736D
    /// `pg_advisory_xact_lock` key every writing transaction takes before it logs its change,
    /// so `changes.seq` order is commit order ("ulcl"): a reader that has seen seq N can never
    /// later find a committed N-1. Taken by `lockChangeLog`.
    static let changeLogLock = 0x756C_636C
    /// The `NOTIFY` channel of committed changes.
    static let channel = "userlist_changes"
    /// The `NOTIFY` channel of presence between daemons (`PostgresPresenceRelay`): nothing is
    /// stored, a message reaches whoever listens at the time.
    static let presenceChannel = "userlist_presence"

    static let steps: [String] = [v1, PostgresHistory.v2, PostgresImportSchema.v3, PostgresHistoryBatch.v4]

    static let v1 = """
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
        CREATE TABLE users (
            id         uuid PRIMARY KEY,
            name       text NOT NULL,
            email      text NOT NULL,
            avatar_url text,
            version    integer NOT NULL DEFAULT 1,
            name_key   text COLLATE "C" NOT NULL,
            email_key  text COLLATE "C" NOT NULL
        );
        CREATE INDEX users_by_name_key ON users (name_key, id);
        CREATE UNIQUE INDEX users_email_key_unique ON users (email_key);
        CREATE INDEX users_name_key_trigrams ON users USING gin (name_key gin_trgm_ops);
        CREATE INDEX users_email_key_trigrams ON users USING gin (email_key gin_trgm_ops);
        CREATE TABLE changes (
            seq        bigserial PRIMARY KEY,
            kind       text NOT NULL CHECK (kind IN ('added', 'saved', 'removed')),
            user_id    uuid NOT NULL,
            name       text,
            email      text,
            avatar_url text,
            version    integer,
            at         timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE store_state (
            singleton      boolean PRIMARY KEY DEFAULT true CHECK (singleton),
            user_count     bigint NOT NULL DEFAULT 0,
            pruned_through bigint NOT NULL DEFAULT 0,
            key_fold       text NOT NULL DEFAULT ''
        );
        INSERT INTO store_state DEFAULT VALUES;
        """

    /// Brings the database to `currentVersion`, or refuses one from a newer release.
    static func migrate(_ connection: PGConnection) throws(PGError) {
        try connection.execute("SELECT pg_advisory_lock(\(migrationLock))", "waiting for the migration lock")
        defer { try? connection.execute("SELECT pg_advisory_unlock(\(migrationLock))", "releasing the migration lock") }
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS userlist_schema (
                version    integer PRIMARY KEY,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """, "creating the schema version table")
        let stored = Int(try connection.query("SELECT COALESCE(MAX(version), 0) FROM userlist_schema", [],
                                              "reading the schema version").first?[0] ?? "0") ?? 0
        if stored > currentVersion {
            throw PGError(sqlState: "XX000",
                          detail: "the database is at schema version \(stored), newer than this release knows "
                          + "(\(currentVersion)); upgrade userlistd",
                          server: connection.server, operation: "checking the schema")
        }
        for version in (stored + 1)...max(stored + 1, currentVersion) where version <= currentVersion {
            try connection.transaction("migrating to schema version \(version)") { () throws(PGError) in
                try connection.execute(steps[version - 1], "migrating to schema version \(version)")
                try connection.query("INSERT INTO userlist_schema (version) VALUES ($1)", [String(version)],
                                     "recording the schema version")
            }
        }
        try rekeyIfFoldChanged(connection)
    }

    /// What `UserKey.fold` makes of a few telling characters: when a release changes the fold
    /// (accents, special cases), this changes and the stored keys must be recomputed.
    static var foldFingerprint: String { UserKey.fold("AÀÉÎõüẞİΣﬁ Ǆ Ω") }

    /// Keys are computed in Swift (so both stores agree), so SQL cannot recompute them: when the
    /// fold differs from the one recorded, every row is re-keyed here, in batches by id, in one
    /// transaction (under the caller's migration lock). Two emails that the new fold makes equal
    /// fail this with the unique index named.
    static func rekeyIfFoldChanged(_ connection: PGConnection) throws(PGError) {
        let operation = "recomputing the sort and search keys"
        let recorded = try connection.query("SELECT key_fold FROM store_state", [], operation).first?[0] ?? ""
        let current = foldFingerprint
        guard recorded != current else { return }
        try connection.transaction(operation) { () throws(PGError) in
            var after = "00000000-0000-0000-0000-000000000000"
            while true {
                let rows = try connection.query(
                    "SELECT id, name, email FROM users WHERE id > $1 ORDER BY id LIMIT 5000", [after], operation).rows
                guard let last = rows.last?[0] else { break }
                after = last
                struct Key: Encodable { let id: String, name_key: String, email_key: String }
                let keys = rows.map {
                    Key(id: $0[0] ?? "", name_key: UserKey.fold($0[1] ?? ""), email_key: UserKey.fold($0[2] ?? ""))
                }
                let json = String(decoding: (try? JSONEncoder().encode(keys)) ?? Data("[]".utf8), as: UTF8.self)
                try connection.query("""
                    UPDATE users u SET name_key = k.name_key, email_key = k.email_key
                    FROM json_to_recordset($1::json) AS k(id uuid, name_key text, email_key text)
                    WHERE u.id = k.id AND (u.name_key, u.email_key) IS DISTINCT FROM (k.name_key, k.email_key)
                    """, [json], operation)
            }
            try connection.query("UPDATE store_state SET key_fold = $1", [current], operation)
        }
    }

    /// The database must speak UTF-8: the keys' byte order is the store's order.
    static func checkEncoding(_ connection: PGConnection) throws(PGError) {
        let encoding = try connection.query("SHOW server_encoding", [], "reading the server encoding").first?[0] ?? ""
        guard encoding.uppercased() == "UTF8" else {
            throw PGError(sqlState: "XX000",
                          detail: "the database encoding is \(encoding); create it with ENCODING 'UTF8'",
                          server: connection.server, operation: "checking the database")
        }
    }

    /// Takes the change-log lock until the transaction ends. A writing transaction takes it
    /// after it has written its users' rows and before it logs its change or touches
    /// `store_state`, never the other way round: so a transaction holding it never waits for a
    /// row, and one that waits for a row (behind an import's merge) holds nothing the merge
    /// needs to finish. Saves to other users go on while an import merges.
    static func lockChangeLog(_ connection: PGConnection, _ operation: String) throws(PGError) {
        try connection.query("SELECT pg_advisory_xact_lock($1)", [String(changeLogLock)], operation)
    }
}
