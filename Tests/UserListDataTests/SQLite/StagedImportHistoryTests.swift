import Foundation
import Testing
@testable import UserListData
import UserListDomain

/// An all-or-nothing import says who made it: one history entry by the committing author, via
/// `import`, with a part for each user it adds or changes; a user it leaves as stored has none; a
/// refused import records nothing.
@Suite struct StagedImportHistoryTests {
    static let alice = ChangeAuthor(uid: 1001, userName: "alice", client: "userctl", via: .command)

    @Test func theCommitRecordsEachAddedAndChangedUserAsTheAuthorsImport() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("s.sqlite"))
        let stored = SampleUsers.generate(count: 3, seed: 21)
        _ = try await store.importUsers(stored)
        let before = try await store.history(HistoryQuery(limit: 100)).entries.count

        var file = stored
        file[0].name = "Renamed By Import"  // changed
        // file[1] and file[2] as stored: nothing to record
        let added = SampleUsers.generate(count: 2, seed: 22)
        file += added
        let staging = try #require(store.importStaging)
        let token = try await staging.beginImport()
        _ = try await staging.stage(StagedImportTests.entries(file), into: token)
        let summary = try await staging.commitImport(token, by: Self.alice)
        #expect(summary.written == 3)

        let entries = try await store.history(HistoryQuery(limit: 100)).entries.dropLast(before)
        #expect(entries.count == 1, "one entry for the import (issue 46 item 6)")
        let entry = try #require(entries.first)
        #expect(entry.kind == .imported && entry.batch == BatchSummary(source: nil, added: 2, updated: 1))
        #expect(entry.author.uid == 1001 && entry.author.userName == "alice" && entry.author.via == .import)
        let renamed = try #require(try await store.history(HistoryQuery(userID: file[0].id)).entries.first)
        #expect(renamed.id == entry.id && renamed.partOf && renamed.kind == .saved)
        #expect(renamed.after?.name == "Renamed By Import")
        for user in added {
            #expect(try await store.history(HistoryQuery(userID: user.id)).entries.map(\.kind) == [.added])
        }
        #expect(try await store.history(HistoryQuery(userID: file[1].id)).entries.map(\.id).contains(entry.id) == false)
    }

    @Test func aRefusedImportRecordsNothing() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("s.sqlite"))
        var users = SampleUsers.generate(count: 20, seed: 23)
        users[12].email = users[3].email  // two ids, one address
        let staging = try #require(store.importStaging)
        let token = try await staging.beginImport()
        _ = try await staging.stage(StagedImportTests.entries(users), into: token)
        await #expect(throws: UserError.self) { try await staging.commitImport(token, by: Self.alice) }
        #expect(try await store.history(HistoryQuery(limit: 10)).entries.isEmpty)
    }
}
