import Foundation
import Testing
@testable import UserListData
import UserListDomain
import UserListTestSupport

/// The WAL is copied into the database file by the checkpointer's own thread once a commit
/// leaves 1,000 pages or more in it (SQLite's automatic checkpoint is off).
@Suite struct CheckpointerTests {
    private static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    @Test func aLargeCommitReachesTheDatabaseFileWithoutAnotherWrite() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("checkpoint.sqlite")
        let store = try SQLiteUserRepository(path: path)
        let before = Self.size(path)
        let users = (0..<20_000).map { User(id: UUID(), name: "Person \($0)", email: "person.\($0)@example.com") }
        #expect(try await store.importUsers(users) == 20_000)
        #expect(Self.size(path + "-wal") > 4 * 1_024 * 1_000, "the commit went to the WAL")
        // Nothing else is written: only the background checkpoint can grow the database file.
        let grown = try await offPool {
            whenFilesChange([path]) { Self.size(path) >= before + 4 * 1_024 * 1_000 }
        }
        #expect(grown, "database file \(Self.size(path)) bytes, was \(before)")
        #expect(try await store.fetchPage(PageRequest(limit: 1)).totalCount == 20_000)
    }
}

/// A clean stop copies the whole WAL into the database file and empties it.
@Suite struct ShutdownCheckpointTests {
    @Test func theDatabaseFileAloneHoldsEveryCommitAfterAShutdownCheckpoint() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("shutdown.sqlite")
        let store = try SQLiteUserRepository(path: path)
        let users = (0..<200).map { User(id: UUID(), name: "Person \($0)", email: "person.\($0)@example.com") }
        #expect(try await store.importUsers(users) == 200)
        _ = try await store.update(User(id: users[0].id, name: "Renamed Last", email: users[0].email, version: 1))
        let walSize = { ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int) ?? 0 }
        #expect(walSize() > 0, "the commits went to the WAL")

        #expect(try store.checkpointForShutdown() == 0, "nothing left uncopied")
        #expect(walSize() == 0, "the WAL is empty")
        // The store is closed: a write asked for later (a background step, a late save) fails
        // rather than putting pages back into the emptied WAL.
        do {
            _ = try await store.update(User(id: users[1].id, name: "Too Late", email: users[1].email, version: 1))
            Issue.record("a write after the shutdown checkpoint went through")
        } catch {
            #expect(error.message.contains("the store is closed"), "\(error.message)")
        }
        #expect(walSize() == 0, "the WAL is still empty")

        // A copy of the database file alone (a backup, a move) has the last commit in it.
        let copy = directory.file("copy.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let copied = try SQLiteUserRepository(path: copy)
        #expect(try await copied.fetchUser(id: users[0].id).name == "Renamed Last")
        #expect(try await copied.fetchPage(PageRequest(limit: 1)).totalCount == 200)
    }
}
