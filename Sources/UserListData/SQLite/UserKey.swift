import CSQLite
import UserListDomain

/// The sort and search key of names and emails: the Domain's `TextKey` (NFKC, case-, accent-
/// and width-insensitive), compared byte-wise as UTF-8 by SQLite's BINARY collation.
///
/// The same function runs in Swift (binding keys, cursors and search prefixes) and in SQL as
/// `userlist_fold(text)` (the migrations' backfills), so both sides always agree. It is the Data
/// layer's one entry point to the key: every store (SQLite, PostgreSQL) calls it.
package enum UserKey {
    package static func fold(_ text: String) -> String { TextKey.fold(text) }

    /// Registers `userlist_fold` on a connection.
    static func register(on db: OpaquePointer) {
        sqlite3_create_function_v2(
            db, "userlist_fold", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, argc, argv in
                guard argc == 1, let value = argv?[0], let text = sqlite3_value_text(value) else {
                    sqlite3_result_null(context)
                    return
                }
                let count = Int(sqlite3_value_bytes(value))
                let folded = UserKey.fold(String(decoding: UnsafeBufferPointer(start: text, count: count),
                                                 as: UTF8.self))
                sqlite3_result_text(context, folded, Int32(folded.utf8.count), SQLITE_TRANSIENT)
            }, nil, nil, nil)
    }
}
