import Foundation
import UserListDomain

extension SQLiteUserRepository {
    /// One range of the primary key (ids are stored as upper-case text of one shape, so the
    /// prefix's lowest and highest ids bound exactly the ids that start with it).
    public func users(withIDPrefix prefix: UserIDPrefix, limit: Int) async throws(UserError) -> [User] {
        try read { connection throws(SQLiteError) -> [User] in
            let statement = try connection.statement(
                "SELECT \(Self.columns) FROM users WHERE id BETWEEN ?1 AND ?2 ORDER BY id LIMIT ?3")
            defer { statement.reset() }
            statement.bind(1, prefix.lowest)
            statement.bind(2, prefix.highest)
            statement.bind(3, limit)
            var users: [User] = []
            while try statement.step("looking users up by the start of their id") {
                users.append(Self.user(from: statement))
            }
            return users
        }
    }
}
