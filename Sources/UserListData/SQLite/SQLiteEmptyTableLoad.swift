import CSQLite
import Foundation
import UserListDomain

extension SQLiteUserRepository {
    /// A big import into an empty store, written many rows to a statement.
    ///
    /// Nothing is stored, so no row can be an update: each user is one insert and one `added`
    /// change, and neither needs a statement of its own. Run one at a time, a million inserts
    /// spend more in starting the statement (opening its cursors, seeking from the root) than in
    /// the row; sixty-four to a statement, and the change log written afterwards in one pass, the
    /// rows of a 1M import take about half as long.
    enum EmptyTableLoad {
        static let rowsPerStatement = 64

        /// Whether `users` can be loaded this way: the table is empty and no id comes twice (a
        /// second entry for an id is an update of the first, which the row-by-row path does).
        static func applies(to users: [KeyedUser], _ connection: SQLiteConnection) throws(SQLiteError) -> Bool {
            guard try connection.integer("SELECT EXISTS (SELECT 1 FROM users)", Importer.operation) == 0 else { return false }
            var ids = Set<UUID>(minimumCapacity: users.count)
            for user in users where !ids.insert(user.user.id).inserted { return false }
            return true
        }

        /// Inserts every user and logs each as `added`, in the order given.
        static func insert(_ users: [KeyedUser], _ connection: SQLiteConnection) throws(SQLiteError) {
            let columns = "INSERT INTO users (id, name, email, avatar_url, version, name_key, email_key) VALUES "
            let row = "(?,?,?,?,?,?,?)"
            let many = try connection.statement(columns + Array(repeating: row, count: rowsPerStatement).joined(separator: ","))
            let one = try connection.statement(columns + row)
            var start = 0
            while start < users.count {
                let count = users.count - start >= rowsPerStatement ? rowsPerStatement : 1
                let statement = count == rowsPerStatement ? many : one
                for offset in 0..<count {
                    let keyed = users[start + offset]
                    bindRow(statement, keyed.user, keys: keyed.keys, from: Int32(7 * offset + 1))
                }
                try statement.run(Importer.operation)
                start += count
            }
            let log = try connection.statement("INSERT INTO changes (kind, user_id, at) SELECT 'added', id, ?1 FROM users ORDER BY rowid")
            log.bind(1, Int(Date().timeIntervalSince1970))
            try log.run(Importer.operation)
        }
    }
}
