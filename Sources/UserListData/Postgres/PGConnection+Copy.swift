import CLibPQ
import Foundation
import UserListDomain

/// `COPY ... FROM STDIN` and `COPY ... TO STDOUT` in text format: the fastest way PostgreSQL
/// loads or hands out many rows (one statement, rows streamed, no per-row parse or plan), used
/// to stage imports (`PostgresImportStaging`) and to export.
extension PGConnection {
    /// Runs `sql` (a `COPY ... FROM STDIN`, text format) and streams `rows` to it, each one
    /// `PGCopyText.line`. Inside the caller's transaction, if any.
    func copyIn(_ sql: String, rows: [[String?]], _ operation: String) throws(PGError) {
        var data = [UInt8]()
        for row in rows { PGCopyText.append(row, to: &data) }
        try copyIn(sql, data: data, operation)
    }

    /// Runs `sql` (a `COPY ... FROM STDIN`, text format) and sends it `data`, rows already in
    /// COPY's text format (`PGCopyText`), in pieces of 256 KiB.
    func copyIn(_ sql: String, data: [UInt8], _ operation: String) throws(PGError) {
        try connect()
        guard let conn else {
            throw PGError(sqlState: nil, detail: "not connected", server: server, operation: operation)
        }
        let start = PQexec(conn, sql)
        let status = start.map(PQresultStatus)
        guard status == PGRES_COPY_IN else {
            try check(start, operation)  // throws the server's reason
            throw PGError(sqlState: nil, detail: "the server did not start the COPY", server: server,
                          operation: operation)
        }
        PQclear(start)
        var failed: String?
        data.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress else { return }
            base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { chars in
                var offset = 0
                while offset < bytes.count && failed == nil {
                    let size = min(1 << 18, bytes.count - offset)
                    if PQputCopyData(conn, chars + offset, Int32(size)) != 1 {
                        failed = Self.message(PQerrorMessage(conn))
                    }
                    offset += size
                }
            }
        }
        _ = PQputCopyEnd(conn, failed)
        // The COPY's own result, then nil: every result must be read before the next command.
        var first: PGError?
        while let result = PQgetResult(conn) {
            do throws(PGError) { try check(result, operation) } catch { first = first ?? error }
        }
        if let first { throw first }
        if let failed { throw PGError(sqlState: nil, detail: failed, server: server, operation: operation) }
    }

    /// Runs `sql` (a `COPY ... TO STDOUT`, text format) and hands each row to `body`, decoded
    /// (`PGCopyText.fields`), as it arrives; rows are never all held at once.
    func copyOut(_ sql: String, _ operation: String, _ body: ([String?]) -> Void) throws(PGError) {
        try copyOutRows(sql, operation) { body(PGCopyText.fields($0)) }
    }

    /// `copyOut` without the decoding: `body` gets each row's bytes as COPY sent them (fields
    /// separated by tabs, escaped, a newline at the end), valid only during the call. For
    /// readers that split and decode in place (`PGCopyRow`) instead of an array of strings a row.
    func copyOutRows(_ sql: String, _ operation: String, _ body: (UnsafeRawBufferPointer) -> Void) throws(PGError) {
        try connect()
        guard let conn else {
            throw PGError(sqlState: nil, detail: "not connected", server: server, operation: operation)
        }
        let start = PQexec(conn, sql)
        guard start.map(PQresultStatus) == PGRES_COPY_OUT else {
            try check(start, operation)
            throw PGError(sqlState: nil, detail: "the server did not start the COPY", server: server,
                          operation: operation)
        }
        PQclear(start)
        while true {
            var line: UnsafeMutablePointer<CChar>?
            let length = PQgetCopyData(conn, &line, 0)
            if length < 0 { break }  // -1: done; -2: failed (the result below says why)
            if let line {
                body(UnsafeRawBufferPointer(start: line, count: Int(length)))
                PQfreemem(line)
            }
        }
        var first: PGError?
        while let result = PQgetResult(conn) {
            do throws(PGError) { try check(result, operation) } catch { first = first ?? error }
        }
        if let first { throw first }
    }

    /// `text` as a SQL string literal, quoted and escaped by libpq for this connection's
    /// encoding and settings (`PQescapeLiteral`). Only for statements that take no parameters
    /// (`COPY`) and must inline a value; everything else binds parameters.
    func literal(_ text: String, _ operation: String) throws(PGError) -> String {
        try connect()
        guard let conn else {
            throw PGError(sqlState: nil, detail: "not connected", server: server, operation: operation)
        }
        guard let escaped = PQescapeLiteral(conn, text, text.utf8.count) else {
            throw PGError(sqlState: nil, detail: Self.message(PQerrorMessage(conn)), server: server,
                          operation: operation)
        }
        defer { PQfreemem(escaped) }
        return String(cString: escaped)
    }
}

/// COPY's text format: columns separated by tabs, rows ended by a newline, NULL as `\N`, and
/// in values a backslash, tab, newline or carriage return written as `\\`, `\t`, `\n`, `\r`.
/// Any other byte goes as is (the connection's encoding, UTF-8).
enum PGCopyText {
    static func append(_ row: [String?], to buffer: inout [UInt8]) {
        for (index, value) in row.enumerated() { append(field: value, first: index == 0, to: &buffer) }
        buffer.append(0x0A)
    }

    /// Appends one field: `value` escaped, after a tab unless it is the row's first.
    static func append(field value: String?, first: Bool = false, to buffer: inout [UInt8]) {
        if !first { buffer.append(0x09) }
        guard let value else {
            buffer.append(0x5C)
            buffer.append(0x4E)  // \N
            return
        }
        // Most values need no escape: copied whole, not byte by byte.
        let needsEscape = value.utf8.contains { $0 == 0x5C || ($0 <= 0x0D && ($0 == 0x09 || $0 == 0x0A || $0 == 0x0D)) }
        guard needsEscape else {
            buffer.append(contentsOf: value.utf8)
            return
        }
        for byte in value.utf8 {
            switch byte {
            case 0x5C: buffer.append(0x5C); buffer.append(0x5C)
            case 0x09: buffer.append(0x5C); buffer.append(0x74)
            case 0x0A: buffer.append(0x5C); buffer.append(0x6E)
            case 0x0D: buffer.append(0x5C); buffer.append(0x72)
            default: buffer.append(byte)
            }
        }
    }

    /// Appends a tab and `value` in decimal (no escape needed).
    static func append(field value: Int, to buffer: inout [UInt8]) {
        buffer.append(0x09)
        buffer.append(contentsOf: String(value).utf8)
    }

    /// Appends a tab and `id`'s text (no escape needed), without Foundation's `vfprintf`.
    static func append(field id: UUID, to buffer: inout [UInt8]) {
        buffer.append(0x09)
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: UUIDText.count))
        buffer.withUnsafeMutableBufferPointer { bytes in
            UUIDText.write(id, uppercase: false, into: UnsafeMutableBufferPointer(rebasing: bytes[start...]))
        }
    }

    /// One row as COPY's text format writes it (without decoding anything).
    static func line(_ row: [String?]) -> String {
        var buffer: [UInt8] = []
        append(row, to: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    /// The fields of one row COPY sent (`line`'s inverse; the trailing newline is optional).
    static func fields(_ bytes: UnsafeRawBufferPointer) -> [String?] {
        var fields: [String?] = []
        var current: [UInt8] = []
        var escaped = false, isNull = false
        func finish() {
            fields.append(isNull ? nil : String(decoding: current, as: UTF8.self))
            current.removeAll(keepingCapacity: true)
            isNull = false
        }
        for byte in bytes {
            if escaped {
                escaped = false
                switch byte {
                case 0x4E: isNull = true  // \N
                case 0x74: current.append(0x09)
                case 0x6E: current.append(0x0A)
                case 0x72: current.append(0x0D)
                case 0x62: current.append(0x08)
                case 0x66: current.append(0x0C)
                case 0x76: current.append(0x0B)
                default: current.append(byte)
                }
                continue
            }
            switch byte {
            case 0x5C: escaped = true
            case 0x09: finish()
            case 0x0A: break
            default: current.append(byte)
            }
        }
        finish()
        return fields
    }

    static func fields(_ line: String) -> [String?] {
        var bytes = Array(line.utf8)
        return bytes.withUnsafeMutableBytes { fields(UnsafeRawBufferPointer($0)) }
    }
}
