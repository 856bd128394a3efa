import Foundation
import Testing
@testable import UserListData
import UserListDomain
import UserListTestSupport

/// Issue 46 item 6, on both stores: an import is one entry of history (who, when, its source,
/// how many users it added and updated), each user's before and after kept with it, and its
/// undo is all or nothing (users changed since refuse it, unless skipped).
@Suite(.serialized, .childProcesses) struct ImportHistoryContractProcessTests {
    let alice = ChangeAuthor(uid: 1001, userName: "alice", client: "userctl", via: .command, daemon: "host-a")
    let bob = ChangeAuthor(uid: 1002, userName: "bob", client: "userctl", via: .command, daemon: "host-a")

    func open(_ kind: StoreKind) throws -> (any UserRepository & UserHistoryRepository, StoreFixture) {
        let fixture = try kind.makeFixture()
        return (try #require(try fixture.open() as? any UserRepository & UserHistoryRepository), fixture)
    }

    /// Imports `users` the way `userctl import` does: staged, then committed, from `source`.
    func stagedImport(_ users: [User], into store: any UserRepository, by author: ChangeAuthor,
                      source: String) async throws -> ImportSummary {
        let staging = try #require(store.importStaging)
        let useCase = StagedImportUseCase(repository: store, author: author)
        let token = try await staging.beginImport()
        _ = try await staging.stage(StagedImportTests.entries(users), into: token)
        return try await useCase.commit(token, source: source)
    }

    @Test(arguments: StoreKind.allCases)
    func anImportIsOneEntryAndEachUserKeepsTheirPart(kind: StoreKind) async throws {
        let (store, fixture) = try open(kind)
        defer { withExtendedLifetime(fixture) {} }  // a staged import's scratch files lie beside the store
        let stored = SampleUsers.generate(count: 5, seed: 31)
        #expect(try await stagedImport(stored, into: store, by: alice, source: "first.json").written == 5)
        var file = stored
        file[0].name = "Renamed By Import"
        file[1].email = "moved@example.com"
        let added = SampleUsers.generate(count: 3, seed: 32)
        #expect(try await stagedImport(file + added, into: store, by: bob, source: "stdin").written == 5)

        let all = try await store.history(HistoryQuery(limit: 100)).entries
        #expect(all.count == 2, "one entry per import, not one per user: \(all.map(\.kind))")
        let second = try #require(all.first)
        #expect(second.kind == .imported && second.userID == nil && second.author.userName == "bob")
        #expect(second.author.via == .import)
        #expect(second.batch == BatchSummary(source: "stdin", added: 3, updated: 2))
        #expect(all.last?.batch == BatchSummary(source: "first.json", added: 5, updated: 0))

        // A user's history shows what each import did to them, under the import's number.
        let renamed = try await store.history(HistoryQuery(userID: stored[0].id)).entries
        let first = try #require(all.last).id
        #expect(renamed.map(\.id) == [second.id, first])
        #expect(renamed[0].kind == .saved && renamed[0].before == UserFields(stored[0]))
        #expect(renamed[0].after?.name == "Renamed By Import")
        #expect(renamed[1].kind == .added && renamed[1].before == nil && renamed[1].after == UserFields(stored[0]))
        // Running the same file again changes nothing and records nothing.
        #expect(try await stagedImport(file + added, into: store, by: bob, source: "stdin").written == 0)
        #expect(try await store.history(HistoryQuery(limit: 100)).entries.count == 2)
        // After a later save the part still shows what the import wrote.
        var later = try await store.fetchUser(id: stored[0].id)
        later.name = "Saved Later"
        _ = try await store.update(later, by: alice)
        let parts = try await store.history(HistoryQuery(userID: stored[0].id)).entries
        #expect(parts.map(\.kind) == [.saved, .saved, .added])
        #expect(parts[1].after?.name == "Renamed By Import" && parts[2].after == UserFields(stored[0]))
        let newcomer = try await store.history(HistoryQuery(userID: added[0].id)).entries
        #expect(newcomer.count == 1 && newcomer[0].kind == .added && newcomer[0].after == UserFields(added[0]))
    }

    @Test(arguments: StoreKind.allCases)
    func aStoreLevelImportIsOneEntryToo(kind: StoreKind) async throws {
        let (store, fixture) = try open(kind)
        defer { withExtendedLifetime(fixture) {} }  // a staged import's scratch files lie beside the store
        var users = SampleUsers.generate(count: 30, seed: 3)
        #expect(try await store.importUsers(users, by: alice) == 30)
        users[4].name = "Changed By Import"
        users[4].version += 1
        #expect(try await store.importUsers(users, by: bob) == 1)
        let all = try await store.history(HistoryQuery(limit: 100)).entries
        #expect(all.map(\.batch) == [BatchSummary(source: nil, added: 0, updated: 1),
                                     BatchSummary(source: nil, added: 30, updated: 0)])
        let part = try #require(try await store.history(HistoryQuery(userID: users[4].id)).entries.first)
        #expect(part.partOf && part.before?.name != "Changed By Import" && part.after?.name == "Changed By Import")
    }

    @Test(arguments: StoreKind.allCases)
    func undoingAnImportIsAllOrNothing(kind: StoreKind) async throws {
        let (store, fixture) = try open(kind)
        defer { withExtendedLifetime(fixture) {} }  // a staged import's scratch files lie beside the store
        let stored = SampleUsers.generate(count: 4, seed: 41)
        _ = try await stagedImport(stored, into: store, by: alice, source: "base.json")
        var file = stored
        file[0].name = "Imported Name 0"
        file[1].name = "Imported Name 1"
        let added = SampleUsers.generate(count: 2, seed: 42)
        _ = try await stagedImport(file + added, into: store, by: alice, source: "update.json")
        let entry = try #require(try await store.history(HistoryQuery(limit: 1)).entries.first?.id)
        // Someone saves one of its users since.
        var since = try await store.fetchUser(id: stored[1].id)
        since.name = "Saved Since"
        since = try await store.update(since, by: bob)
        let revert = RevertHistoryEntryUseCase(history: store, users: store, author: bob)

        await #expect(throws: UserError.changedSinceImport(entry: entry, ids: [stored[1].id], count: 1)) {
            try await revert.undoImport(entry: entry, skippingChanged: false)
        }
        #expect(try await store.fetchUser(id: stored[0].id).name == "Imported Name 0", "refused: nothing changed")
        #expect(try await store.fetchUser(id: added[0].id).id == added[0].id)

        let undo = try await revert.undoImport(entry: entry, skippingChanged: true)
        #expect(undo.removed == 2 && undo.restored == 1 && undo.skipped == [stored[1].id])
        let restored = try await store.fetchUser(id: stored[0].id)
        #expect(UserFields(restored) == UserFields(stored[0]) && restored.version == 3)
        #expect(try await store.fetchUser(id: stored[1].id) == since, "changed since: left as it is")
        for user in added {
            await #expect(throws: UserError.notFound(id: user.id)) { _ = try await store.fetchUser(id: user.id) }
        }
        #expect(try await store.fetchPage(PageRequest(limit: 10)).totalCount == 4)

        let top = try #require(try await store.history(HistoryQuery(limit: 1)).entries.first)
        #expect(top.id == undo.entry && top.kind == .imported && top.author.reverting == entry)
        #expect(top.batch == BatchSummary(source: "update.json", added: 0, updated: 1, removed: 2))
        let mine = try await store.history(HistoryQuery(userID: stored[0].id)).entries
        #expect(mine.first?.partOf == true && mine.first?.author.reverting == entry)
        #expect(mine.first?.after?.name == stored[0].name)
        await #expect { try await revert.undoImport(entry: entry, skippingChanged: true) } throws: { error in
            guard case .alreadyUndone(entry, _) = error as? UserError else { return false }
            return true
        }
        // The undo is not undone in turn: the refusal says what it is and what to do instead,
        // and names no flag the caller did not give.
        let undoEntry = try #require(undo.entry)
        await #expect { try await revert.undoImport(entry: undoEntry, skippingChanged: false) } throws: { error in
            guard case .validation(_, let message) = error as? UserError else { return false }
            return message.contains("undid import \(entry)") && message.contains("import the file again")
                && !message.contains("--force-skip-changed")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func historyFiltersByKindAndViaAndCountsWhatIsLeft(kind: StoreKind) async throws {
        let (store, fixture) = try open(kind)
        defer { withExtendedLifetime(fixture) {} }  // a staged import's scratch files lie beside the store
        _ = try await stagedImport(SampleUsers.generate(count: 3, seed: 51), into: store, by: alice, source: "a.json")
        var user = try await store.add(NewUser(name: "Hand Made", email: "hand@example.com"), by: bob.via(.intent))
        for index in 1...4 {
            user.name = "Hand Made \(index)"
            user = try await store.update(user, by: bob)
        }
        let imports = try await store.history(HistoryQuery(kind: .imported)).entries
        #expect(imports.count == 1 && imports[0].batch?.source == "a.json")
        #expect(try await store.history(HistoryQuery(via: .intent, seenFrom: "host-a")).entries.map(\.kind) == [.added])
        #expect(try await store.history(HistoryQuery(via: .anotherDaemon, seenFrom: "host-b")).entries.count == 6)
        #expect(try await store.history(HistoryQuery(via: .anotherDaemon, seenFrom: "host-a")).entries.isEmpty)
        let history = FetchHistoryUseCase(repository: store, seenFrom: "host-a")
        let page = try await history.page(HistoryQuery(limit: 2), counting: true)
        #expect(page.entries.count == 2 && page.more == 4)
        let last = try await history.page(HistoryQuery(limit: 10), counting: true)
        #expect(last.entries.count == 6 && last.more == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func retentionPrunesAnImportWithItsParts(kind: StoreKind) async throws {
        let (store, fixture) = try open(kind)
        defer { withExtendedLifetime(fixture) {} }  // a staged import's scratch files lie beside the store
        let users = SampleUsers.generate(count: 10, seed: 9)
        _ = try await store.importUsers(users, by: alice)
        #expect(try await store.pruneHistory(before: Date().addingTimeInterval(3_600)) == 1)
        #expect(try await store.history(HistoryQuery(userID: users[0].id)).entries.isEmpty)
    }
}
