/// Schema v3 of the PostgreSQL store: durable import staging (`PostgresImportStaging`).
///
/// In the versioned schema, not `CREATE ... IF NOT EXISTS` at open as SQLite does: the change
/// log must also accept the import's one `reloaded` row, and loosening its CHECK is a migration
/// that every daemon on the database has to agree on (an older release refuses the newer
/// schema instead of misreading the log).
///
/// - `imports`: one row per import being staged or committed; `author` (JSON of
///   `ChangeAuthor`) is set by the commit, so a merge finished after a crash is attributed.
/// - `import_staged`: the entries, as COPY writes them; no index and no key, so staging costs
///   what COPY costs and never touches `users`. Regular (logged) tables: a committed import
///   must survive a crash of the server too.
enum PostgresImportSchema {
    static let v3 = """
        ALTER TABLE changes DROP CONSTRAINT changes_kind_check;
        ALTER TABLE changes ADD CONSTRAINT changes_kind_check CHECK (kind IN ('added', 'saved', 'removed', 'reloaded'));
        CREATE TABLE imports (
            id         bigserial PRIMARY KEY,
            state      text NOT NULL CHECK (state IN ('staging', 'committed')),
            entries    bigint NOT NULL DEFAULT 0,
            touched_at timestamptz NOT NULL DEFAULT now(),
            author     text
        );
        CREATE TABLE import_staged (
            import_id        bigint NOT NULL,
            position         integer NOT NULL,
            id               uuid NOT NULL,
            name             text NOT NULL,
            email            text NOT NULL,
            avatar_url       text,
            expected_version integer,
            name_key         text COLLATE "C" NOT NULL,
            email_key        text COLLATE "C" NOT NULL
        );
        """

    /// `user_id` of the `reloaded` change-log row (the column is NOT NULL; the row is about everyone).
    static let everyone = "00000000-0000-0000-0000-000000000000"
}
