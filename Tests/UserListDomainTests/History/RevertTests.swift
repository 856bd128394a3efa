import Foundation
import Testing
import UserListDomain

/// Undo as a person uses it: the user goes back to what the entry changed, the undo is itself
/// in the history, and a user changed since is a conflict, as any save.
@Suite struct RevertTests {
    let alice = ChangeAuthor(uid: 1001, userName: "alice", client: "userctl", via: .intent)
    let bob = ChangeAuthor(uid: 1002, userName: "bob", client: "userctl", via: .command)
    let grace = User(id: UUID(), name: "Grace Hopper", email: "grace@example.com", version: 1)

    @Test func revertingARenameRestoresTheNameAndIsRecordedAsItsOwnEntry() async throws {
        let store = InMemoryHistoryStore([grace])
        _ = try await UpdateUserUseCase(repository: store, author: alice).rename(grace, to: "Amazing Grace")
        let renamed = try #require(store.entries.last)
        let reverted = try await RevertHistoryEntryUseCase(history: store, users: store, author: bob).execute(entry: renamed.id)
        #expect(reverted?.name == "Grace Hopper")
        let undo = try #require(store.entries.last)
        #expect(undo.kind == .saved)
        #expect(undo.author.userName == "bob")
        #expect(undo.author.reverting == renamed.id)
        #expect(undo.before?.name == "Amazing Grace" && undo.after?.name == "Grace Hopper")
    }

    @Test func aUserChangedSinceTheEntryIsAConflictAndNothingIsWritten() async throws {
        let store = InMemoryHistoryStore([grace])
        let first = try await UpdateUserUseCase(repository: store, author: alice).rename(grace, to: "Amazing Grace")
        let renamed = try #require(store.entries.last)
        let second = try await UpdateUserUseCase(repository: store, author: bob).rename(first, to: "Admiral Hopper")
        await #expect(throws: UserError.conflict(stored: second)) {
            try await RevertHistoryEntryUseCase(history: store, users: store, author: bob).execute(entry: renamed.id)
        }
        #expect(store.entries.count == 2)
    }

    @Test func revertingAnAddRemovesTheUserAndRevertingThatBringsThemBack() async throws {
        let store = InMemoryHistoryStore([])
        let added = try await AddUserUseCase(repository: store, author: alice)
            .execute(NewUser(name: "Ada", email: "ada@example.com"))
        let revert = RevertHistoryEntryUseCase(history: store, users: store, author: bob)
        #expect(try await revert.execute(entry: 1) == nil)
        await #expect(throws: UserError.notFound(id: added.id)) { _ = try await store.fetchUser(id: added.id) }
        let back = try await revert.execute(entry: 2)
        #expect(back?.id == added.id && back?.name == "Ada")
        #expect(store.entries.map(\.kind) == [.added, .removed, .added])
    }

    /// Issue 46 item 5: reverting an entry a second time says it is undone already (not a
    /// conflict to retry), for a save, an add and a removal, and writes nothing.
    @Test func revertingAnEntryTwiceSaysItIsAlreadyUndone() async throws {
        let store = InMemoryHistoryStore([grace])
        let revert = RevertHistoryEntryUseCase(history: store, users: store, author: bob)
        _ = try await UpdateUserUseCase(repository: store, author: alice).rename(grace, to: "Amazing Grace")
        _ = try await revert.execute(entry: 1)
        let added = try await AddUserUseCase(repository: store, author: alice).execute(NewUser(name: "Ada", email: "ada@example.com"))
        _ = try await revert.execute(entry: 3)
        try await store.remove(id: grace.id, by: alice)
        _ = try await revert.execute(entry: 5)
        let written = store.entries.count
        for entry: Int64 in [1, 3, 5] {
            await #expect { try await revert.execute(entry: entry) } throws: { error in
                guard case .alreadyUndone(entry, _) = error as? UserError else { return false }
                return (error as? UserError)?.message.hasPrefix("Entry \(entry) is already undone: ") == true
            }
        }
        #expect(store.entries.count == written)
        await #expect(throws: UserError.notFound(id: added.id)) { _ = try await store.fetchUser(id: added.id) }
    }

    @Test func pagesAreNewestFirstAndFilteredByActorAndUser() async throws {
        let store = InMemoryHistoryStore([grace])
        var user = grace
        for index in 0..<5 {
            user = try await UpdateUserUseCase(repository: store, author: index.isMultiple(of: 2) ? alice : bob)
                .rename(user, to: "Grace \(index)")
        }
        let history = FetchHistoryUseCase(repository: store)
        let first = try await history.user(grace.id, limit: 2)
        #expect(first.entries.map(\.after?.name) == ["Grace 4", "Grace 3"])
        let second = try await history.user(grace.id, before: first.next, limit: 2)
        #expect(second.entries.map(\.after?.name) == ["Grace 2", "Grace 1"])
        #expect(try await history.all(actorUID: 1002).entries.map(\.after?.name) == ["Grace 3", "Grace 1"])
    }

    @Test func aChangeAnotherDaemonWroteReadsAsComingFromIt() {
        var author = alice
        author.daemon = "host-b:/run/userlistd.sock"
        let entry = HistoryEntry(id: 1, at: Date(), userID: grace.id, kind: .saved, author: author,
                                 before: nil, after: nil, versionAfter: 2)
        #expect(entry.via(seenFrom: "host-a:/run/userlistd.sock") == .anotherDaemon)
        #expect(entry.via(seenFrom: "host-b:/run/userlistd.sock") == .intent)
    }
}
