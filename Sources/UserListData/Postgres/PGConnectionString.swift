import Foundation

/// The `--database` value when it names PostgreSQL: a libpq URI (`postgresql://`, `postgres://`)
/// or a key/value conninfo (`host=db1 dbname=users`).
///
/// A password must never be on the command line nor in logs: a string that carries one is
/// refused (use `PGPASSFILE`, `~/.pgpass`, libpq's environment, or a systemd credential), and
/// `redacted` is what gets logged either way.
public struct PGConnectionString: Sendable, CustomStringConvertible {
    public let value: String

    /// True when `text` is meant for PostgreSQL rather than a SQLite path.
    public static func isPostgres(_ text: String) -> Bool {
        let lower = text.lowercased()
        if lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://") { return true }
        // conninfo: `key=value` words, with a key libpq knows.
        let keys = ["host=", "hostaddr=", "dbname=", "port=", "user=", "service="]
        return !text.hasPrefix("/") && keys.contains { key in
            lower.hasPrefix(key) || lower.contains(" " + key)
        }
    }

    /// Fails with a sentence for the person when `value` carries a password.
    public init(_ value: String) throws(PGConnectionStringError) {
        self.value = value
        if Self.password(in: value) != nil { throw .passwordInString(redacted: Self.redact(value)) }
    }

    public var redacted: String { Self.redact(value) }
    public var description: String { redacted }

    /// The password `text` carries (`user:secret@` in a URI, `password=` or `?password=`).
    static func password(in text: String) -> String? {
        let lower = text.lowercased()
        if lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://") {
            let rest = text[text.range(of: "://")!.upperBound...]
            let authority = rest.prefix { $0 != "/" && $0 != "?" }
            if let at = authority.lastIndex(of: "@") {
                let userInfo = authority[..<at]
                if let colon = userInfo.firstIndex(of: ":") { return String(userInfo[userInfo.index(after: colon)...]) }
            }
            if let query = rest.firstIndex(of: "?") {
                let items = rest[rest.index(after: query)...].split(separator: "&")
                for item in items where item.lowercased().hasPrefix("password=") {
                    return String(item.dropFirst("password=".count))
                }
            }
            return nil
        }
        guard let range = lower.range(of: "password") else { return nil }
        let after = lower[range.upperBound...].drop { $0 == " " }
        return after.first == "=" ? "?" : nil
    }

    /// `text` with any password replaced by `***`.
    static func redact(_ text: String) -> String {
        let lower = text.lowercased()
        if lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://") {
            var result = text
            if let scheme = result.range(of: "://") {
                let rest = result[scheme.upperBound...]
                let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
                if let at = rest[..<authorityEnd].lastIndex(of: "@"),
                   let colon = rest[..<at].firstIndex(of: ":") {
                    result.replaceSubrange(result.index(after: colon)..<at, with: "***")
                }
            }
            return result.replacing(/(?i)password=[^&]*/, with: "password=***")
        }
        return text.replacing(/(?i)password\s*=\s*('(?:[^'\\]|\\.)*'|\S*)/, with: "password=***")
    }
}

public enum PGConnectionStringError: Error, CustomStringConvertible {
    case passwordInString(redacted: String)

    public var description: String {
        switch self {
        case .passwordInString(let redacted):
            "the database string \(redacted) carries a password; put it in a PGPASSFILE (or ~/.pgpass, or the "
                + "systemd credential 'pgpass') instead, so it never shows on the command line or in logs"
        }
    }
}
