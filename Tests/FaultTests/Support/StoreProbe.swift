import CSQLite
import Foundation

/// Reads the daemon's SQLite file directly (a second process may hold it: WAL lets readers in).
struct StoredUser: Equatable, CustomStringConvertible {
    let id: String
    let name: String
    let version: Int
    var description: String { "\(id.prefix(8)) v\(version) '\(name.prefix(40))'" }
}

enum StoreProbe {
    private static func open(_ path: String) throws -> OpaquePointer {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "rc \(rc)"
            sqlite3_close(db)
            throw FaultFailure("cannot open \(path): \(message)")
        }
        sqlite3_busy_timeout(db, 5000)
        return db
    }

    private static func rows(_ path: String, _ sql: String) throws -> [[String?]] {
        let db = try open(path)
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw FaultFailure("\(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
        defer { sqlite3_finalize(statement) }
        var result: [[String?]] = []
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw FaultFailure("\(sql): \(String(cString: sqlite3_errmsg(db)))") }
            var row: [String?] = []
            for column in 0..<sqlite3_column_count(statement) {
                row.append(sqlite3_column_text(statement, column).map { String(cString: $0) })
            }
            result.append(row)
        }
        return result
    }

    /// The first column of the first row of `sql`, if any.
    static func value(_ path: String, _ sql: String) throws -> String? {
        try rows(path, sql).first?.first ?? nil
    }

    /// Every stored user by id.
    static func users(_ path: String) throws -> [String: StoredUser] {
        var users: [String: StoredUser] = [:]
        for row in try rows(path, "SELECT id, name, version FROM users") {
            let user = StoredUser(id: (row[0] ?? "").lowercased(), name: row[1] ?? "", version: Int(row[2] ?? "") ?? -1)
            users[user.id] = user
        }
        return users
    }

    /// `PRAGMA integrity_check`: "ok" for a sound file, else the problems it lists.
    static func integrityCheck(_ path: String) throws -> String {
        try rows(path, "PRAGMA integrity_check").compactMap { $0.first ?? nil }.joined(separator: "; ")
    }
}
