import Dispatch
import Foundation
import Synchronization
import UserListDomain

/// Import and export of users as a JSON array of `UserDTO` (the REST shape, see REST.md).
extension SQLiteUserRepository {
    /// Imports a JSON array of users: an upsert by id, all or nothing (see `importUsers`).
    /// Each entry must pass the Domain's validation rules; the first that does not aborts the
    /// import with a `.validation` error naming the entry. Returns the rows inserted or changed.
    public func importJSON(_ data: Data) async throws(UserError) -> Int {
        let dtos = try Self.decodedImport(data)
        let distinct = ImportRows.allDistinct(dtos.lazy.map(\.id))
        // Validated and keyed on all cores while the writer inserts the first ones.
        let users = OrderedChunks(dtos) { (index, dto) throws(UserError) in
            KeyedUser(try Self.validated(dto, entry: index + 1))
        }
        return try await importKeyed(ImportRows(coming: users, distinctIDs: distinct))
    }

    /// A JSON import file as validated users (both stores import through this): the REST shape
    /// decoded, then the Domain's rules for every entry.
    static func validatedImport(_ data: Data) throws(UserError) -> [User] {
        try validated(try decodedImport(data))
    }

    static func decodedImport(_ data: Data) throws(UserError) -> [UserDTO] {
        do {
            return try UserJSONArray.decode(data)
        } catch {
            throw .unavailable(reason: "the import is not a JSON array of users "
                               + "{id, full_name, email, avatar_url, version}: \(error)")
        }
    }

    /// The Domain's rules for every entry, on all cores (they cost ~10 µs an entry, more than
    /// inserting it). The first invalid entry, in file order, is the error.
    static func validated(_ dtos: [UserDTO]) throws(UserError) -> [User] {
        try ParallelMap.map(dtos) { (index, dto) throws(UserError) in try validated(dto, entry: index + 1) }
    }

    private static func validated(_ dto: UserDTO, entry: Int) throws(UserError) -> User {
        var user = dto.toDomain()
        do {
            user.name = try UserValidation.validName(user.name)
            user.email = try UserValidation.validEmail(user.email)
            user.avatarURL = try UserValidation.validAvatarURL(user.avatarURL)
        } catch {
            guard case .validation(let field, let message) = error else { throw error }
            throw .validation(field: field, message: "Entry \(entry) of the import (\(dto.id)): \(message)")
        }
        return user
    }

    /// Reads and imports the JSON file at `path`.
    public func importJSON(contentsOf path: String) async throws(UserError) -> Int {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unavailable(reason: "cannot read the import file \(path): \(error.localizedDescription)")
        }
        return try await importJSON(data)
    }

    /// Every user as a JSON array of `UserDTO`, in list order (name, then id), one user per
    /// line. Deterministic: exporting the same store twice yields the same bytes.
    ///
    /// Reads one snapshot on a connection of its own, so a long export neither blocks page
    /// reads nor sees a write half-way through. Holds the whole export in memory: for files,
    /// `exportJSON(to:)` streams instead.
    public func exportJSON() throws(UserError) -> Data {
        var out: [UInt8] = []
        try exportJSON { out.append(contentsOf: $0) }
        return Data(out)
    }

    /// The export of `exportJSON()`, handed to `sink` in pieces of about 1 MiB (constant memory).
    public func exportJSON(_ sink: ([UInt8]) throws -> Void) throws(UserError) {
        var out: [UInt8] = []
        out.reserveCapacity(Self.exportPieceBytes + 4_096)
        out.append(UInt8(ascii: "["))
        do {
            let connection = try SQLiteConnection(path: path, mode: .readOnly, busyTimeoutMilliseconds: 5_000)
            try connection.readTransaction("exporting users") { () throws(SQLiteError) in
                let statement = try connection.statement("SELECT \(Self.columns) FROM users ORDER BY name_key, id")
                defer { statement.reset() }
                var first = true
                while try statement.step("exporting users") {
                    out.append(contentsOf: first ? [0x0A] : [0x2C, 0x0A])
                    first = false
                    JSONWriter.appendRow(statement, to: &out)
                    if out.count >= Self.exportPieceBytes {
                        do { try sink(out) } catch {
                            throw .custom("\(error)", path: path, operation: "writing the export")
                        }
                        out.removeAll(keepingCapacity: true)
                    }
                }
                out.append(contentsOf: first ? [0x5D, 0x0A] : [0x0A, 0x5D, 0x0A])
            }
            try sink(out)
        } catch let error as SQLiteError {
            throw error.userError
        } catch {
            throw .unavailable(reason: "cannot write the export: \(error)")
        }
    }

    static let exportPieceBytes = 1 << 20

    /// Writes the export to `path` atomically (a reader never sees half a file) and in constant
    /// memory: streamed into a temporary file next to it, renamed over `path` when complete.
    public func exportJSON(to path: String) throws(UserError) {
        let temporary = path + ".partial-\(ProcessInfo.processInfo.processIdentifier)"
        guard FileManager.default.createFile(atPath: temporary, contents: nil),
              let handle = FileHandle(forWritingAtPath: temporary) else {
            throw .unavailable(reason: "cannot write the export file \(path): cannot create \(temporary)")
        }
        do {
            try exportJSON { piece in try handle.write(contentsOf: piece) }
            try handle.close()
            guard rename(temporary, path) == 0 else {
                throw UserError.unavailable(reason: "cannot write the export file \(path): "
                                            + String(cString: strerror(errno)))
            }
        } catch {
            try? handle.close()
            unlink(temporary)
            if let error = error as? UserError { throw error }
            throw .unavailable(reason: "cannot write the export file \(path): \(error.localizedDescription)")
        }
    }
}

/// A byte-level JSON writer for the export: Foundation's encoders cost ~50 MB/s, this is
/// several times faster and its output is byte-for-byte predictable (key order fixed).
enum JSONWriter {
    /// One row of `SELECT id, name, email, avatar_url, version`, written from SQLite's own
    /// bytes (no `User`, no UUID parsing: export is a copy).
    static func appendRow(_ row: SQLiteStatement, to out: inout [UInt8]) {
        out.append(contentsOf: #"{"id":"#.utf8)
        appendString(row.bytes(0), to: &out)
        out.append(contentsOf: #","full_name":"#.utf8)
        appendString(row.bytes(1), to: &out)
        out.append(contentsOf: #","email":"#.utf8)
        appendString(row.bytes(2), to: &out)
        out.append(contentsOf: #","avatar_url":"#.utf8)
        if row.isNull(3) { out.append(contentsOf: "null".utf8) } else { appendString(row.bytes(3), to: &out) }
        out.append(contentsOf: #","version":"#.utf8)
        out.append(contentsOf: String(row.int(4)).utf8)
        out.append(UInt8(ascii: "}"))
    }

    static func appendString(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
