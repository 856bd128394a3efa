import Foundation
import Testing
import UserListData
import UserListDomain
import UserListTestSupport

/// The reason inside `.unavailable`, or a failed test.
func unavailableReason(_ body: () async throws -> Void) async -> String {
    do {
        try await body()
        Issue.record("expected .unavailable, got success")
    } catch UserError.unavailable(let reason) {
        return reason
    } catch {
        Issue.record("expected .unavailable, got \(error)")
    }
    return ""
}

/// Runs a program and returns its exit status (for chattr).
func run(_ executable: String, _ arguments: [String]) -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch { return -1 }
    process.waitUntilExit()
    return process.terminationStatus
}

/// How many of this process's descriptors are open on `path` (from `/proc/self/fd`).
func descriptorsOpen(on path: String) -> Int {
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return descriptors.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == path }.count
}

@Suite(.serialized, .childProcesses) struct SQLiteFailureTests {
    @Test func aMissingDirectoryIsNamed() async throws {
        let directory = try TemporaryDirectory()
        let missing = directory.file("no-such-dir")
        let reason = await unavailableReason { _ = try SQLiteUserRepository(path: missing + "/users.sqlite") }
        #expect(reason.contains("the directory \(missing) does not exist"), "\(reason)")
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test func aFileThatIsNotADatabaseIsNamed() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("garbage.sqlite")
        var random = SystemRandomNumberGenerator()
        try Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &random) }).write(to: URL(fileURLWithPath: path))
        let reason = await unavailableReason { _ = try SQLiteUserRepository(path: path) }
        #expect(reason.contains("\(path) is not a SQLite database or is damaged"), "\(reason)")
    }

    /// Root ignores permission bits, so `chmod 0444` proves nothing in CI. The immutable
    /// attribute stops root too: SQLite's open for writing fails and it falls back to read-only,
    /// which the store must report instead of failing later on the first save.
    /// Whether `chattr +i` works here (it needs root and a file system with the attribute).
    static let chattrWorks: Bool = {
        guard let directory = try? TemporaryDirectory() else { return false }
        let file = directory.file("probe")
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        let works = run("/usr/bin/chattr", ["+i", file]) == 0
        _ = run("/usr/bin/chattr", ["-i", file])
        return works
    }()

    @Test(.enabled(if: SQLiteFailureTests.chattrWorks, "chattr +i is not permitted here (needs root and a file system with the immutable attribute)"))
    func anImmutableFileIsReportedAsReadOnly() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("users.sqlite")
        do {
            let store = try SQLiteUserRepository(path: path)
            _ = try await store.importUsers(SampleUsers.generate(count: 3))
        }
        // The writer's thread lets its connection go a moment after the import's reply. Until
        // every connection to the file is closed, SQLite keeps the closed ones' read-write
        // descriptors for reuse, and the next open would take one of those instead of opening
        // the now-immutable file.
        try #require(await eventually { descriptorsOpen(on: path) == 0 }, "the first store still holds \(path) open")
        try #require(run("/usr/bin/chattr", ["+i", path]) == 0, "chattr +i \(path) failed")
        defer { _ = run("/usr/bin/chattr", ["-i", path]) }
        let reason = await unavailableReason { _ = try SQLiteUserRepository(path: path) }
        #expect(reason.contains("\(path) is read-only"), "\(reason)")
        #expect(reason.contains("immutable"), "\(reason)")

        // Read-only on purpose: reading works, writing says why it cannot.
        let reader = try SQLiteUserRepository(path: path, options: .init(readOnly: true))
        #expect(try await reader.fetchPage(PageRequest()).users.count == 3)
    }

    @Test func aStoreOpenedReadOnlyReadsButRefusesWrites() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("users.sqlite")
        let users = SampleUsers.generate(count: 5)
        do {
            _ = try await SQLiteUserRepository(path: path).importUsers(users)
        }
        let store = try SQLiteUserRepository(path: path, options: .init(readOnly: true))
        #expect(try await store.fetchPage(PageRequest()).totalCount == 5)
        var edited = try await store.fetchUser(id: users[0].id)
        edited.name = "Changed"
        let reason = await unavailableReason { _ = try await store.update(edited) }
        #expect(reason.contains(path) && reason.contains("read-only"), "\(reason)")
        #expect(try await store.fetchUser(id: users[0].id).name == users[0].name)
    }

    @Test func aMissingFileOpenedReadOnlyIsNamed() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("absent.sqlite")
        let reason = await unavailableReason { _ = try SQLiteUserRepository(path: path, options: .init(readOnly: true)) }
        #expect(reason.contains(path) && reason.contains("does not exist"), "\(reason)")
    }

    /// `max_page_count` makes SQLITE_FULL happen for real, on the same code path as a full disk.
    @Test func aFullDiskFailsTheWriteAndLeavesTheStoreAsItWas() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("users.sqlite")
        let store = try SQLiteUserRepository(path: path, options: .init(maxPageCount: 40))
        var added = 0
        var reason = ""
        for user in SampleUsers.generate(count: 5_000, seed: 3) {
            let result = await outcome { () async throws(UserError) -> User in
                try await store.add(NewUser(id: user.id, name: user.name, email: user.email, avatarURL: user.avatarURL))
            }
            if case .failure(let error) = result {
                reason = "\(error)"
                break
            }
            added += 1
        }
        #expect(added > 0 && added < 5_000)
        #expect(reason.contains("the disk holding \(path) is full"), "\(reason)")
        #expect(try await store.fetchPage(PageRequest()).totalCount == added)

        // A failing bulk import is all or nothing.
        let before = try store.exportJSON()
        let fullReason = await unavailableReason { _ = try await store.importUsers(SampleUsers.generate(count: 2_000, seed: 4)) }
        #expect(fullReason.contains("full"))
        #expect(try store.exportJSON() == before)
        #expect(try await store.fetchPage(PageRequest()).totalCount == added)

        // Once there is room again (here: no quota), the same store file takes edits.
        let someone = try await store.fetchPage(PageRequest(limit: 1)).users[0]
        var edited = someone
        edited.name = "X"
        let roomy = try SQLiteUserRepository(path: path)
        #expect(try await roomy.update(edited).version == someone.version + 1)
        #expect(try await store.fetchUser(id: someone.id).name == "X")
    }
}
