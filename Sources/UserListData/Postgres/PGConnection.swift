import CLibPQ
import Foundation
import Glibc

/// One libpq connection (`PGconn`), reconnected on demand, with its prepared statements.
///
/// Not thread-safe, like libpq itself: an instance is confined to one thread or serial queue
/// (a `PGPool` worker's queue, or the change feed's own thread) and every call blocks that
/// thread, never a Swift-concurrency pool thread.
final class PGConnection {
    let conninfo: String
    /// What errors and logs call the server (password removed).
    let server: String
    /// Internal for `PGConnection+Copy`; only this class and that extension touch it.
    private(set) var conn: OpaquePointer?
    /// SQL text → name of the statement prepared on the current `conn` (emptied on reconnect).
    private var prepared: [String: String] = [:]

    init(conninfo: String, server: String) {
        self.conninfo = conninfo
        self.server = server
    }

    deinit { if let conn { PQfinish(conn) } }

    var isConnected: Bool { conn.map { PQstatus($0) == CONNECTION_OK } ?? false }

    /// The socket, for waiting on notifications (`-1` when not connected).
    var socket: Int32 { conn.map(PQsocket) ?? -1 }

    /// Connects if not connected (or the old connection broke). Blocks for at most the
    /// connect timeout (5 s unless the connection string says otherwise).
    func connect() throws(PGError) {
        if isConnected { return }
        disconnect()
        // Later keywords win; `dbname` (expanded: the user's URI or conninfo) comes last so
        // everything it says overrides our defaults.
        let keywords = ["connect_timeout", "keepalives_idle", "keepalives_interval", "keepalives_count",
                        "tcp_user_timeout", "fallback_application_name", "dbname"]
        let values = ["5", "10", "5", "3", "20000", "userlistd", conninfo]
        let connection = withCStrings(keywords) { keys in
            withCStrings(values) { vals in PQconnectdbParams(keys, vals, 1) }
        }
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let detail = connection.map { Self.message(PQerrorMessage($0)) }
                ?? ulpq_load_error().map { String(cString: $0) } ?? "out of memory"
            if let connection { PQfinish(connection) }
            throw PGError(sqlState: nil, detail: detail, server: server, operation: "connecting")
        }
        conn = connection
        prepared = [:]
        // Quiet NOTICEs ("relation already exists, skipping") that libpq would print on stderr.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        // A backend whose daemon died mid-statement (kill -9) notices within 2 s and rolls back,
        // releasing its locks (an import's merge lock among them), instead of running on until
        // it next writes to the socket. PostgreSQL 14+; an older server's refusal is ignored.
        PQclear(PQexec(connection, "SET client_connection_check_interval = 2000"))
    }

    func disconnect() {
        if let conn { PQfinish(conn) }
        conn = nil
        prepared = [:]
    }

    // MARK: statements

    /// Runs `sql` as a prepared statement (prepared on first use on this connection) with text
    /// parameters (`nil` is SQL NULL) and returns its rows as text.
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = [], _ operation: String) throws(PGError) -> PGRows {
        try connect()
        guard let conn else {
            throw PGError(sqlState: nil, detail: "not connected", server: server, operation: operation)
        }
        let name: String
        if let known = prepared[sql] {
            name = known
        } else {
            name = "s\(prepared.count + 1)"
            let result = PQprepare(conn, name, sql, Int32(parameters.count), nil)
            try check(result, operation)
            prepared[sql] = name
        }
        let result = withOptionalCStrings(parameters) { values in
            PQexecPrepared(conn, name, Int32(parameters.count), values, nil, nil, 0)
        }
        return try check(result, operation)
    }

    /// Runs statements without parameters (several, separated by `;`), unprepared: for
    /// transaction control and migrations.
    func execute(_ sql: String, _ operation: String) throws(PGError) {
        try connect()
        try check(PQexec(conn, sql), operation)
    }

    /// Runs `body` between BEGIN and COMMIT; any error rolls back. When the connection turns
    /// out to be broken at BEGIN (the server restarted since the last use), nothing was done
    /// yet, so it reconnects and tries once more.
    func transaction<T>(_ operation: String, _ body: () throws(PGError) -> T) throws(PGError) -> T {
        do {
            try execute("BEGIN", operation)
        } catch where error.isConnectionLost {
            disconnect()
            try execute("BEGIN", operation)
        }
        do {
            let value = try body()
            try execute("COMMIT", operation)
            return value
        } catch {
            if isConnected { try? execute("ROLLBACK", operation) }
            throw error
        }
    }

    /// A read that may be retried once on a fresh connection when the old one broke.
    func read<T>(_ body: () throws(PGError) -> T) throws(PGError) -> T {
        do {
            return try body()
        } catch where error.isConnectionLost {
            disconnect()
            return try body()
        }
    }

    // MARK: notifications

    /// Waits up to `timeout` for the socket (or `wake`, a pipe's read end, drained here) to be
    /// readable, then returns the notifications received since the last call, in order. Throws
    /// when the connection broke.
    func waitForNotifications(timeout: Duration, wake: Int32) throws(PGError) -> [PGNotification] {
        guard let conn else {
            throw PGError(sqlState: nil, detail: "not connected", server: server, operation: "listening")
        }
        var channels = drainNotifications(conn)
        if !channels.isEmpty { return channels }
        var descriptors = [pollfd(fd: PQsocket(conn), events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        let milliseconds = Int32(timeout.components.seconds * 1000
                                 + timeout.components.attoseconds / 1_000_000_000_000_000)
        _ = poll(&descriptors, 2, milliseconds)
        if descriptors[1].revents != 0 {
            var buffer = [UInt8](repeating: 0, count: 64)
            while Glibc.read(wake, &buffer, buffer.count) > 0 {}
        }
        if PQconsumeInput(conn) == 0 || PQstatus(conn) != CONNECTION_OK {
            let detail = Self.message(PQerrorMessage(conn))
            disconnect()
            throw PGError(sqlState: nil, detail: detail, server: server, operation: "listening")
        }
        channels = drainNotifications(conn)
        return channels
    }

    private func drainNotifications(_ conn: OpaquePointer) -> [PGNotification] {
        var notifications: [PGNotification] = []
        while let notify = PQnotifies(conn) {
            notifications.append(PGNotification(channel: String(cString: notify.pointee.relname),
                                                 payload: notify.pointee.extra.map { String(cString: $0) } ?? ""))
            PQfreemem(notify)
        }
        return notifications
    }

    // MARK: results

    @discardableResult
    func check(_ result: OpaquePointer?, _ operation: String) throws(PGError) -> PGRows {
        defer { if let result { PQclear(result) } }
        guard let result else {
            let detail = conn.map { Self.message(PQerrorMessage($0)) } ?? "no result"
            if !isConnected { disconnect() }
            throw PGError(sqlState: nil, detail: detail, server: server, operation: operation)
        }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let state = PQresultErrorField(result, Self.field("C")).map { String(cString: $0) }
            let constraint = PQresultErrorField(result, Self.field("n")).map { String(cString: $0) }
            let detail = Self.message(PQresultErrorMessage(result))
            let connectionBroke = !isConnected
            if connectionBroke { disconnect() }
            throw PGError(sqlState: connectionBroke ? nil : state, detail: detail, server: server,
                          operation: operation, constraint: constraint)
        }
        let rowCount = Int(PQntuples(result)), columnCount = Int(PQnfields(result))
        var rows: [[String?]] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<Int32(rowCount) {
            var values: [String?] = []
            values.reserveCapacity(columnCount)
            for column in 0..<Int32(columnCount) {
                values.append(PQgetisnull(result, row, column) == 1
                              ? nil : String(cString: PQgetvalue(result, row, column)))
            }
            rows.append(values)
        }
        let affected = Int(String(cString: PQcmdTuples(result))) ?? 0
        return PGRows(rows: rows, affected: affected)
    }

    private static func field(_ letter: Unicode.Scalar) -> Int32 { Int32(letter.value) }

    static func message(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "unknown error" }
        return String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "\n", with: "; ")
    }
}

/// One `NOTIFY` heard: its channel and payload (empty when none was given).
struct PGNotification {
    let channel: String
    let payload: String
}

/// Rows of one result as text (`nil`: NULL), and how many rows the command touched.
struct PGRows {
    var rows: [[String?]]
    var affected: Int

    var first: [String?]? { rows.first }
}

private func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    withOptionalCStrings(strings.map(Optional.some), body)
}

private func withOptionalCStrings<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let pointers = strings.map { $0.map { UnsafePointer(strdup($0)!) } }
    defer { for pointer in pointers { free(UnsafeMutablePointer(mutating: pointer)) } }
    return body(pointers + [nil])
}
