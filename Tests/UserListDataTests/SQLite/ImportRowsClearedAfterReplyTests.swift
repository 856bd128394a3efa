import Testing
@testable import UserListData
import UserListDomain
import UserListTestSupport

/// A finished import's rows (staged, sorted, the import itself) are deleted after its reply, so
/// the client does not wait for them (issue #29: about a second at 330,000 entries); a store
/// that stops before that deletes them when it next opens. The deletion is held, before it
/// starts, by the store's test hook.
// The limit only ends a hang (a deletion held forever): 0.05 s alone, but 91 s once in `make
// test` with both cores busy elsewhere, when every in-process suite shares the pool.
@Suite(.timeLimit(.minutes(5))) struct ImportRowsClearedAfterReplyTests {
    struct HeldClear {
        let directory: TemporaryDirectory
        let path: String
        let gate = SliceGate()
        let store: SQLiteUserRepository

        /// A store that imported 300 new users and holds the deletion of the import's rows.
        init() async throws {
            directory = try TemporaryDirectory()
            path = directory.file("s.sqlite")
            var options = SQLiteUserRepository.Options()
            let gate = gate
            options.beforeClearingImport = { await gate.reached(1) }
            store = try SQLiteUserRepository(path: path, options: options)
            let token = try await StagedImportTests.staged(store, SampleUsers.generate(count: 300, seed: 71))
            let summary = try await store.importStaging!.commitImport(token, by: StagedImportHistoryTests.alice)
            #expect(summary == ImportSummary(read: 300, written: 300))
            try #require(await gate.waitUntilHeld(), "the deletion never started")
        }
    }

    @Test func theReplyComesBeforeTheRowsAreDeleted() async throws {
        let held = try await HeldClear()
        #expect(try SlicedImportMergeTests.leftovers(held.path) > 0, "the rows were deleted before the reply")
        // Meanwhile the import is whole to readers, and writers go on.
        #expect(try await held.store.fetchPage(PageRequest(limit: 1)).totalCount == 300)
        _ = try await held.store.add(NewUser(name: "Meanwhile", email: "meanwhile@example.org"))
        await held.gate.release()
        await held.store.importRowsCleared()
        #expect(try SlicedImportMergeTests.leftovers(held.path) == 0)
        #expect(try await held.store.fetchPage(PageRequest(limit: 1)).totalCount == 301)
    }

    @Test func rowsAStopLeftAreDeletedWhenTheStoreOpensAgain() async throws {
        let held = try await HeldClear()
        // A clean stop closes the writer: the deletion, let go after it, can write nothing.
        try held.store.checkpointForShutdown()
        await held.gate.release()
        await held.store.importRowsCleared()
        #expect(try SlicedImportMergeTests.leftovers(held.path) > 0)

        let reopened = try SQLiteUserRepository(path: held.path)
        #expect(try SlicedImportMergeTests.leftovers(held.path) == 0)
        #expect(try await reopened.fetchPage(PageRequest(limit: 1)).totalCount == 300, "imported once, not again")
        #expect(try StagedImportMergeTests.changeKinds(reopened, after: 0).filter { $0 == "reloaded" }.count == 1)
    }
}
