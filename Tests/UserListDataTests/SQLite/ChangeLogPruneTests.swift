import Foundation
import Testing
@testable import UserListData

/// The change log keeps its newest 10,000 rows and every row younger than a minute, whichever
/// keeps more, and deletes the rest.
@Suite struct ChangeLogPruneTests {
    private func logRows(old: Int, young: Int, oldFirst: Bool = true) throws -> (SQLiteConnection, TemporaryDirectory) {
        let directory = try TemporaryDirectory()
        let path = directory.file("prune.sqlite")
        _ = try SQLiteUserRepository(path: path)
        let connection = try SQLiteConnection(path: path, mode: .readWrite, busyTimeoutMilliseconds: 5_000)
        let now = Int(Date().timeIntervalSince1970)
        func insert(_ count: Int, at: Int) throws {
            guard count > 0 else { return }
            try connection.execute("""
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count))
                INSERT INTO changes (kind, user_id, at) SELECT 'added', 'someone', \(at) FROM n
                """, "filling the log")
        }
        try insert(old, at: now - 3_600)
        try insert(young, at: now)
        return (connection, directory)
    }

    private func remaining(_ connection: SQLiteConnection) throws -> (count: Int, oldest: Int) {
        (try connection.integer("SELECT COUNT(*) FROM changes", "counting"),
         try connection.integer("SELECT MIN(seq) FROM changes", "reading"))
    }

    @Test func oldRowsBeyondTheNewestTenThousandGo() throws {
        let (connection, _) = try logRows(old: 30_000, young: 5_000)
        try SQLiteUserRepository.prune(connection)
        let left = try remaining(connection)
        #expect(left.count == 10_000 && left.oldest == 25_001, "\(left)")
    }

    @Test func everyYoungRowStaysHoweverManyThereAre() throws {
        let (connection, _) = try logRows(old: 5_000, young: 30_000)
        try SQLiteUserRepository.prune(connection)
        let left = try remaining(connection)
        #expect(left.count == 30_000 && left.oldest == 5_001, "\(left)")
    }

    @Test func aShortLogIsKeptWhole() throws {
        let (connection, _) = try logRows(old: 9_000, young: 0)
        try SQLiteUserRepository.prune(connection)
        #expect(try remaining(connection).count == 9_000)
    }
}
