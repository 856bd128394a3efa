import CSQLite

/// What keeps a sliced merge (`SQLiteImportMerge`) able to finish once its checks have passed:
/// from the commit's mark to its last slice, triggers refuse any write (by any connection, any
/// process) to a user the import has yet to merge, or of an address one of its entries gives
/// another user. Between slices every other write goes on; these few would otherwise make a
/// later slice fail (a version it was checked against moved, or its address was taken) after
/// earlier ones were committed.
///
/// The daemon's own saves that meet the guard wait for the merge to end and try again
/// (`SQLiteUserRepository.guardedWrite`): the import comes first, as if it had been one
/// transaction. A user already merged is not guarded: its slice is committed.
enum SQLiteImportGuard {
    /// The message the triggers raise (SQLITE_CONSTRAINT_TRIGGER), recognised by `isImportGuard`.
    static let message = "userlistd: an import being merged holds this user or address"

    static func names(_ id: Int) -> [String] {
        ["import_guard_\(id)_added", "import_guard_\(id)_saved", "import_guard_\(id)_removed"]
    }

    /// Whether import `id` has an entry not merged yet that meets `condition`: looked up by id
    /// in `import_merge`, by address in `import_emails` (`SQLiteImportSort` fills both).
    private static func pending(_ id: Int, in table: String = "import_merge", where condition: String) -> String {
        """
        EXISTS (SELECT 1 FROM \(table) WHERE import_id = \(id) AND \(condition)
                AND id > (SELECT merged_through FROM import_progress WHERE import_id = \(id)))
        """
    }

    /// The triggers. The merge's own writes do not meet them: its slices run with the writer's
    /// triggers off (`SQLiteConnection.withoutTriggers`). The first test passes the writes of a
    /// slice that switches the change log off (`log_changes`) instead, as releases before did:
    /// one of them may finish an import this one committed.
    static func create(_ id: Int) -> String {
        let raise = "BEGIN SELECT RAISE(ABORT, '\(message)'); END;"
        let others = "(SELECT log_changes FROM store_state WHERE only = 1)"
        let names = names(id)
        return """
            CREATE TRIGGER IF NOT EXISTS \(names[0]) BEFORE INSERT ON users
            WHEN \(others) AND (\(pending(id, where: "id = NEW.id"))
                OR \(pending(id, in: "import_emails", where: "email_key = NEW.email_key AND id != NEW.id")))
            \(raise)
            CREATE TRIGGER IF NOT EXISTS \(names[1]) BEFORE UPDATE ON users
            WHEN \(others) AND (\(pending(id, where: "id = OLD.id"))
                OR (NEW.email_key IS NOT OLD.email_key
                    AND \(pending(id, in: "import_emails", where: "email_key = NEW.email_key AND id != NEW.id"))))
            \(raise)
            CREATE TRIGGER IF NOT EXISTS \(names[2]) BEFORE DELETE ON users
            WHEN \(others) AND \(pending(id, where: "id = OLD.id"))
            \(raise)
            """
    }

    static func drop(_ id: Int, _ connection: SQLiteConnection, _ operation: String) throws(SQLiteError) {
        for name in names(id) { try connection.execute("DROP TRIGGER IF EXISTS \(name)", operation) }
    }
}

extension SQLiteError {
    /// A write the guard of an import being merged refused (`SQLiteImportGuard`).
    var isImportGuard: Bool {
        code == SQLITE_CONSTRAINT | (7 << 8) && detail.contains(SQLiteImportGuard.message)
    }
}
