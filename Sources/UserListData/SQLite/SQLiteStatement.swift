import CSQLite
import Foundation
import UserListDomain

/// SQLite copies the bytes of a bound text before `sqlite3_bind_text` returns.
let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A prepared statement owned by one `SQLiteConnection`, reused across calls.
///
/// Not Sendable: it lives and dies with its connection, on whatever serializes that connection.
final class SQLiteStatement {
    let handle: OpaquePointer
    let sql: String
    private unowned let connection: SQLiteConnection

    init(handle: OpaquePointer, sql: String, connection: SQLiteConnection) {
        self.handle = handle
        self.sql = sql
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Makes the statement ready for a fresh use: resets it and drops old bindings.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: binding (1-based indexes, as in SQLite)

    func bind(_ index: Int32, _ value: String) {
        // A native Swift string is contiguous, NUL-terminated UTF-8: no copy before SQLite's own.
        sqlite3_bind_text(handle, index, value, Int32(value.utf8.count), SQLITE_TRANSIENT)
    }

    /// Binds raw UTF-8 bytes as text; used for exclusive upper bounds of prefix ranges, which
    /// need not be valid UTF-8 (comparison is byte-wise).
    func bind(_ index: Int32, utf8 bytes: [UInt8]) {
        guard !bytes.isEmpty else { return bind(index, "") }
        bytes.withUnsafeBytes { raw in
            _ = sqlite3_bind_text(handle, index, raw.baseAddress!.assumingMemoryBound(to: CChar.self),
                                  Int32(raw.count), SQLITE_TRANSIENT)
        }
    }

    func bind(_ index: Int32, _ value: String?) {
        if let value { bind(index, value) } else { sqlite3_bind_null(handle, index) }
    }

    func bind(_ index: Int32, _ value: Int) {
        sqlite3_bind_int64(handle, index, Int64(value))
    }

    func bind(_ index: Int32, _ value: Int?) {
        if let value { bind(index, value) } else { sqlite3_bind_null(handle, index) }
    }

    func bind(_ index: Int32, _ id: UUID) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: UUIDText.count) { buffer in
            UUIDText.write(id, uppercase: true, into: buffer)
            buffer.withMemoryRebound(to: CChar.self) { text in
                _ = sqlite3_bind_text(handle, index, text.baseAddress, Int32(UUIDText.count), SQLITE_TRANSIENT)
            }
        }
    }

    // MARK: stepping

    /// Advances the statement: `true` when a row is ready, `false` when done.
    func step(_ operation: @autoclosure () -> String) throws(SQLiteError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code:
            let error = connection.error(code, operation())
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs a statement that returns no rows, then resets it.
    func run(_ operation: @autoclosure () -> String) throws(SQLiteError) {
        defer { reset() }
        while try step(operation()) {}
    }

    // MARK: columns (0-based indexes, as in SQLite)

    func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// The column's UTF-8 bytes, valid until the next step or reset.
    func bytes(_ column: Int32) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: sqlite3_column_text(handle, column),
                            count: Int(sqlite3_column_bytes(handle, column)))
    }

    /// The column's text as a UUID, parsed from its bytes (`UUID(uuidString:)` goes through
    /// `sscanf`: a tenth of the daemon's time in an export), or nil if it is not one.
    func uuid(_ column: Int32) -> UUID? {
        UUIDText.parse(UnsafeRawBufferPointer(bytes(column)))
    }

    func optionalText(_ column: Int32) -> String? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : text(column)
    }

    func int(_ column: Int32) -> Int {
        Int(sqlite3_column_int64(handle, column))
    }

    func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }
}
