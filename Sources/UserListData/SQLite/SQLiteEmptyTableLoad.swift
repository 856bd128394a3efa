import CSQLite
import Foundation
import UserListDomain

extension SQLiteUserRepository {
    /// A big import into an empty store, written many rows to a statement.
    ///
    /// Nothing is stored, so no row can be an update, and every screen showing the store shows
    /// it empty: each user is one insert, sixty-four to a statement (one at a time, a million
    /// inserts spend more in starting the statement, opening its cursors and seeking from the
    /// root, than in the row), and the change log gets one `reloaded` row rather than a million
    /// `added` ones: feeds tell their readers to read everything again, once.
    enum EmptyTableLoad {
        static let rowsPerStatement = 64

        /// Whether `users` can be loaded this way: the table is empty and no id comes twice (a
        /// second entry for an id is an update of the first, which the row-by-row path does).
        static func applies(to users: ImportRows, _ connection: SQLiteConnection) throws(SQLiteError) -> Bool {
            try connection.integer("SELECT EXISTS (SELECT 1 FROM users)", Importer.operation) == 0
                && users.hasDistinctIDs()
        }

        /// Inserts every user, in the order given, and logs the load.
        static func insert(_ users: ImportRows, _ connection: SQLiteConnection) throws(SQLiteError) {
            let columns = "INSERT INTO users (id, name, email, avatar_url, version, name_key, email_key) VALUES "
            let row = "(?,?,?,?,?,?,?)"
            let many = try connection.statement(
                columns + Array(repeating: row, count: rowsPerStatement).joined(separator: ","))
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
            let log = try connection.statement("INSERT INTO changes (kind, user_id, at) VALUES ('reloaded', '', ?1)")
            log.bind(1, Int(Date().timeIntervalSince1970))
            try log.run(Importer.operation)
        }
    }
}
