import CSQLite
import UserListDomain

/// A failed SQLite call, with the file it concerned, written for the person reading `journalctl`.
///
/// Stays inside the Data layer: everything public maps it to `UserError.unavailable(reason:)`
/// (or to a Domain error the caller can act on) through `userError`.
struct SQLiteError: Error, CustomStringConvertible {
    /// The extended result code (`sqlite3_extended_result_codes` is on for every connection).
    var code: Int32
    /// SQLite's own words (`sqlite3_errmsg`), or ours when SQLite was never reached.
    var detail: String
    var path: String
    /// What we were doing, e.g. "opening", "importing users".
    var operation: String
    /// Set when a write was refused because another user has the email address: the error then
    /// reaches the caller as `UserError.duplicateEmail`, not as a store failure.
    var duplicateEmail: (email: String, other: User)? = nil
    /// Set when an entry of an import failed the Domain's rules while the import was being
    /// written: the import is rolled back and the caller gets that error as it is.
    var refusal: UserError? = nil

    var primaryCode: Int32 { code & 0xff }

    var description: String { "\(summary) (\(operation), SQLite code \(code): \(detail))" }

    /// One sentence naming the file and what is wrong with it.
    var summary: String {
        switch primaryCode {
        case SQLITE_FULL:
            "the disk holding \(path) is full (or the store reached its size limit); nothing was written"
        case SQLITE_READONLY:
            "\(path) is read-only for this process; nothing was written"
        case SQLITE_NOTADB, SQLITE_CORRUPT:
            "\(path) is not a SQLite database or is damaged"
        case SQLITE_CANTOPEN:
            "cannot open \(path)"
        case SQLITE_BUSY, SQLITE_LOCKED:
            "\(path) is locked by another writer and stayed locked past the busy timeout"
        case SQLITE_IOERR:
            "an I/O error occurred on \(path)"
        case SQLITE_PERM, SQLITE_AUTH:
            "permission denied on \(path)"
        default:
            "the user store at \(path) failed"
        }
    }

    var userError: UserError {
        if let refusal { return refusal }
        if let duplicateEmail { return .duplicateEmail(email: duplicateEmail.email, other: duplicateEmail.other) }
        return .unavailable(reason: description)
    }

    /// `email` is taken by `other`: the write is rolled back and the caller told who has it.
    static func duplicate(_ email: String, other: User, path: String, operation: String) -> SQLiteError {
        var error = SQLiteError(code: SQLITE_CONSTRAINT, detail: "UNIQUE constraint failed: users.email_key",
                                path: path, operation: operation)
        error.duplicateEmail = (email, other)
        return error
    }

    /// An import entry that `error` refuses: the write is rolled back and the caller told why.
    static func refused(_ error: UserError) -> SQLiteError {
        var wrapped = SQLiteError(code: SQLITE_ABORT, detail: "\(error)", path: "", operation: "importing users")
        wrapped.refusal = error
        return wrapped
    }

    /// An error of our own making (not from SQLite), e.g. a missing directory.
    static func custom(_ detail: String, code: Int32 = SQLITE_CANTOPEN, path: String,
                       operation: String) -> SQLiteError {
        SQLiteError(code: code, detail: detail, path: path, operation: operation)
    }
}
