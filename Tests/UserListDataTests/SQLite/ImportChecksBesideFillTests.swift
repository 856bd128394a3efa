import Foundation
import Testing
@testable import UserListData
import UserListDomain
import ThreadLocks
import UserListTestSupport

/// An import's checks run beside its sort and fill, before the guard that keeps what they read
/// from changing is whole. A write committed in between must not slip past both: the merge sees
/// the change log moved and checks again.
@Suite struct ImportChecksBesideFillTests {
    @Test func anAddressTakenAfterTheChecksBeganIsStillRefusedAndNothingIsWritten() async throws {
        let directory = try TemporaryDirectory()
        let opened = Lock<SQLiteUserRepository?>(nil)
        let taken = Lock<User?>(nil)
        var options = SQLiteUserRepository.Options()
        // Another client takes the address an entry gives, after the checks read the store.
        options.afterImportChecks = {
            guard let store = opened.withLock({ $0 }),
                  var apart = try? await store.fetchPage(PageRequest(limit: 1)).users.first else { return }
            apart.email = "Wanted@example.org"
            let saved = try? await store.update(apart)
            taken.withLock { $0 = saved }
        }
        let store = try SQLiteUserRepository(path: directory.file("s.sqlite"), options: options)
        opened.withLock { $0 = store }
        _ = try await store.add(NewUser(name: "Apart", email: "apart@example.org"))
        var file = SampleUsers.generate(count: 30, seed: 62)
        file[11].email = "wanted@example.org"
        let token = try await StagedImportTests.staged(store, file, chunk: 7)

        await #expect {
            try await store.importStaging!.commitImport(token, by: StagedImportHistoryTests.alice)
        } throws: { error in
            guard case .rejectedEntry(12, file[11].id, let reason)? = error as? UserError else { return false }
            return reason.contains("already used by “Apart”")
        }
        #expect(taken.withLock { $0 }?.email == "Wanted@example.org", "the save in the gap went through")
        let page = try await store.fetchPage(PageRequest(limit: 10))
        #expect(page.totalCount == 1 && page.users.map(\.name) == ["Apart"], "the import wrote nothing")
    }
}
