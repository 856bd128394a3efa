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
        static func applies(to users: ImportRows, _ connection: SQLiteConnection) throws(SQLiteError) -> Bool {
            try connection.integer("SELECT EXISTS (SELECT 1 FROM users)", Importer.operation) == 0 && users.hasDistinctIDs()
        }

        /// Inserts every user and logs each as `added`, in the order given.
        static func insert(_ users: ImportRows, _ connection: SQLiteConnection) throws(SQLiteError) {
            let columns = "INSERT INTO users (id, name, email, avatar_url, version, name_key, email_key) VALUES "
            let row = "(?,?,?,?,?,?,?)"
            let many = try connection.statement(columns + Array(repeating: row, count: rowsPerStatement).joined(separator: ","))
            var batch: [KeyedUser] = []
            batch.reserveCapacity(rowsPerStatement)
            try users.forEach { user throws(SQLiteError) in
                batch.append(user)
                guard batch.count == rowsPerStatement else { return }
                for (offset, keyed) in batch.enumerated() {
                    bindRow(many, keyed.user, keys: keyed.keys, from: Int32(7 * offset + 1))
                }
                try many.run(Importer.operation)
                batch.removeAll(keepingCapacity: true)
            }
            let one = try connection.statement(columns + row)
            for keyed in batch {
                bindRow(one, keyed.user, keys: keyed.keys)
                try one.run(Importer.operation)
            }
            let log = try connection.statement("INSERT INTO changes (kind, user_id, at) SELECT 'added', id, ?1 FROM users ORDER BY rowid")
            log.bind(1, Int(Date().timeIntervalSince1970))
            try log.run(Importer.operation)
        }
    }
}
