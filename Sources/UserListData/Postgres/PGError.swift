import UserListDomain

/// A failed libpq call, naming the server (password removed) and what we were doing, written for
/// the person reading `journalctl`.
///
/// Stays inside the Data layer: everything public maps it to a `UserError` through `userError`.
struct PGError: Error, CustomStringConvertible {
    /// The five-character SQLSTATE when the server answered (`23505` unique violation, ...);
    /// `nil` when the server could not be reached or the connection broke.
    var sqlState: String?
    /// libpq's or the server's own words.
    var detail: String
    /// The server, as `PGConnectionString.redacted` shows it.
    var server: String
    /// What we were doing, e.g. "saving a user".
    var operation: String
    /// The unique constraint a 23505 named, if any.
    var constraint: String?

    /// The connection is gone (server restarted, network down): the caller may reconnect.
    var isConnectionLost: Bool {
        sqlState == nil || sqlState!.hasPrefix("08") || sqlState == "57P01" || sqlState == "57P02"
            || sqlState == "57P03"
    }
    var isUniqueViolation: Bool { sqlState == "23505" }

    /// Whether what failed only read (or connected): then nothing can have half happened.
    var isRead: Bool {
        ["reading", "connecting", "listening", "checking"].contains { operation.hasPrefix($0) }
    }

    /// `detail` as one line: libpq writes several, indented with tabs; a message is one line on a screen.
    var oneLineDetail: String { detail.split(whereSeparator: \.isWhitespace).joined(separator: " ") }

    var description: String {
        let detail = oneLineDetail
        if isConnectionLost {
            return "PostgreSQL at \(server) cannot be reached (\(operation): \(detail)); "
                + (isRead ? "try again" : "the request was not confirmed, try again")
        }
        return "PostgreSQL at \(server) refused the request (\(operation), SQLSTATE \(sqlState ?? "-"): \(detail))"
    }

    var userError: UserError { .unavailable(reason: description) }
}
