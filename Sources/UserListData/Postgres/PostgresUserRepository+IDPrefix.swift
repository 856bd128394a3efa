import Foundation
import UserListDomain

extension PostgresUserRepository {
    /// One range of the `uuid` primary key: uuids compare byte by byte, as their hex digits do.
    public func users(withIDPrefix prefix: UserIDPrefix, limit: Int) async throws(UserError) -> [User] {
        let bounds = [prefix.lowest.uuidString, prefix.highest.uuidString, String(limit)]
        return try await read { connection throws(PGError) -> [User] in
            try connection.query("SELECT \(Self.columns) FROM users WHERE id BETWEEN $1 AND $2 ORDER BY id LIMIT $3",
                                 bounds, "looking users up by the start of their id").rows.map { Self.user($0) }
        }
    }
}
