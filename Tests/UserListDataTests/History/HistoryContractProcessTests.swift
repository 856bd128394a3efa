import Foundation
import Testing
@testable import UserListData
import UserListDomain
import UserListTestSupport

/// What both stores promise about history: every change recorded with its author in the same
/// transaction, pages newest first, filters, revert through the store, and
/// retention. Runs against SQLite and a PostgreSQL started in a temporary directory.
@Suite(.serialized, .childProcesses) struct HistoryContractProcessTests {
    let alice = ChangeAuthor(uid: 1001, userName: "alice", client: "userctl", via: .intent, daemon: "host-a")
    let bob = ChangeAuthor(uid: 1002, userName: "bob", client: "userctl", via: .command, daemon: "host-b")

    func open(_ kind: StoreKind) throws -> (any UserRepository & UserHistoryRepository, StoreFixture) {
        let fixture = try kind.makeFixture()
        let store = try fixture.open()
        return (try #require(store as? any UserRepository & UserHistoryRepository), fixture)
    }

    @Test(arguments: StoreKind.allCases)
    func everyChangeIsRecordedWithWhoMadeItAndTheFieldsBeforeAndAfter(kind: StoreKind) async throws {
        let (store, _) = try open(kind)
        let added = try await store.add(NewUser(name: "Grace Hopper", email: "grace@example.com"), by: alice)
        var edited = added
        edited.name = "Amazing Grace"
        edited.avatarURL = "https://example.com/g.png"
        let saved = try await store.update(edited, by: bob)
        try await store.remove(id: added.id, by: alice)

        let page = try await store.history(HistoryQuery(userID: added.id))
        #expect(page.entries.map(\.kind) == [.removed, .saved, .added])
        #expect(page.next == nil)
        let (removed, save, add) = (page.entries[0], page.entries[1], page.entries[2])
        #expect(add.before == nil && add.after == UserFields(name: "Grace Hopper", email: "grace@example.com"))
        #expect(add.author == alice && add.versionAfter == 1)
        #expect(save.before == UserFields(name: "Grace Hopper", email: "grace@example.com"))
        #expect(save.after == UserFields(name: "Amazing Grace", email: "grace@example.com", avatarURL: "https://example.com/g.png"))
        #expect(save.author == bob && save.versionAfter == saved.version)
        #expect(removed.before == save.after && removed.after == nil)
        #expect(abs(removed.at.timeIntervalSinceNow) < 600)
        #expect(try await store.historyEntry(save.id) == save)
    }

    @Test(arguments: StoreKind.allCases)
    func aRefusedSaveLeavesNoEntry(kind: StoreKind) async throws {
        let (store, _) = try open(kind)
        let user = try await store.add(NewUser(name: "Ada", email: "ada@example.com"), by: alice)
        _ = try await store.update(User(id: user.id, name: "Ada King", email: user.email, version: 1), by: alice)
        await #expect(throws: UserError.self) {
            _ = try await store.update(User(id: user.id, name: "Stale", email: user.email, version: 1), by: bob)
        }
        let other = try await store.add(NewUser(name: "Other", email: "other@example.com"), by: alice)
        var clash = try await store.fetchUser(id: user.id)
        clash.email = "OTHER@example.com"
        // Another user's address is a validation error naming them (retrying cannot help),
        // never a conflict, which would show that other user as this one's stored state.
        await #expect(throws: UserError.duplicateEmail(email: "OTHER@example.com", other: other)) {
            _ = try await store.update(clash, by: bob)
        }
        await #expect(throws: UserError.duplicateEmail(email: "other@example.com", other: other)) {
            _ = try await store.add(NewUser(name: "Third", email: "other@example.com"), by: bob)
        }
        #expect(try await store.history(HistoryQuery(userID: user.id)).entries.map(\.kind) == [.saved, .added])
    }

    /// Two daemons' saves (or removes) of one user at once: one wins, and only its change is in
    /// the history, with its author and what it replaced. The loser gets its conflict and
    /// leaves no entry (an entry for a save that never happened would show on every screen).
    @Test(arguments: StoreKind.allCases)
    func racingWritesRecordOnlyTheWinner(kind: StoreKind) async throws {
        let (store, fixture) = try open(kind)
        let second = try #require(try fixture.open() as? any UserRepository & UserHistoryRepository)
        for round in 0..<10 {
            let user = try await store.add(NewUser(name: "Round \(round)", email: "r\(round)@example.com"), by: alice)
            var a = user, b = user
            a.name = "Alice's edit"
            b.email = "bob.\(round)@example.com"
            async let savedByAlice = outcome { () async throws(UserError) -> User in try await store.update(a, by: alice) }
            async let savedByBob = outcome { () async throws(UserError) -> User in try await second.update(b, by: bob) }
            let (resultA, resultB) = await (savedByAlice, savedByBob)
            let stored = try await store.fetchUser(id: user.id)
            let winner = (try? resultA.get()) != nil ? alice : bob
            #expect([resultA, resultB].filter { (try? $0.get()) != nil }.count == 1, "round \(round)")
            var entries = try await store.history(HistoryQuery(userID: user.id)).entries
            #expect(entries.map(\.kind) == [.saved, .added], "round \(round)")
            #expect(entries.first?.author == winner && entries.first?.versionAfter == stored.version)
            #expect(entries.first?.before == UserFields(name: user.name, email: user.email))
            #expect(entries.first?.after == UserFields(name: stored.name, email: stored.email))

            async let removedByAlice = outcome { () async throws(UserError) in try await store.remove(id: user.id, by: alice) }
            async let removedByBob = outcome { () async throws(UserError) in try await second.remove(id: user.id, by: bob) }
            let removals = await [removedByAlice, removedByBob]
            #expect(removals.filter { (try? $0.get()) != nil }.count == 1, "round \(round)")
            entries = try await store.history(HistoryQuery(userID: user.id)).entries
            #expect(entries.map(\.kind) == [.removed, .saved, .added], "round \(round)")
            #expect(entries.first?.before == UserFields(name: stored.name, email: stored.email))
        }
    }

    /// Issue 46 item 5: saving what is stored (the name it has) is not a change: no version,
    /// no entry, nothing on the feed, and the save answers with the stored user. A name equal
    /// only up to Unicode normalization is still a change (the bytes differ).
    @Test(arguments: StoreKind.allCases)
    func aSaveThatChangesNothingIsNotAChange(kind: StoreKind) async throws {
        let (store, fixture) = try open(kind)
        defer { withExtendedLifetime(fixture) {} }  // the feed opens the file after `open`
        let feed: any UserChangeFeed = switch kind {
        case .sqlite: try SQLiteChangeFeed(observing: try #require(store as? SQLiteUserRepository))
        case .postgres: try PostgresChangeFeed(observing: try #require(store as? PostgresUserRepository))
        }
        let collector = ChangeCollector(feed)
        let user = try await store.add(NewUser(name: "Jose\u{301}", email: "jose@example.com"), by: alice)
        #expect(try await store.update(user, by: bob) == user)
        #expect(try await UpdateUserUseCase(repository: store, author: bob).rename(user, to: user.name) == user)
        #expect(try await store.fetchUser(id: user.id).version == 1)
        var composed = user
        composed.name = "Jos\u{E9}"
        let saved = try await store.update(composed, by: bob)
        #expect(saved.version == 2)
        #expect(await collector.wait(for: 2, timeout: .seconds(20)) == [.added(user), .saved(saved)])
        #expect(try await store.history(HistoryQuery(userID: user.id)).entries.map(\.kind) == [.saved, .added])
        // A stale save of the stored fields is still the conflict it was.
        await #expect(throws: UserError.conflict(stored: saved)) { _ = try await store.update(user, by: bob) }
    }

    /// A user removed and added again (an undo of a removal, or `recreate` on a screen) goes on
    /// from its last version: a screen still holding the removed user's version 1 or 2 must not
    /// pass the version check of the new user and overwrite it unseen.
    @Test(arguments: StoreKind.allCases)
    func aUserAddedAgainGoesOnFromItsLastVersion(kind: StoreKind) async throws {
        let (store, fixture) = try open(kind)
        defer { withExtendedLifetime(fixture) {} }
        var user = try await store.add(NewUser(name: "Ada", email: "ada@example.com"), by: alice)
        user.name = "Ada King"
        let stale = try await store.update(user, by: bob)   // version 2, on someone's screen
        try await store.remove(id: user.id, by: alice)
        let back = try await store.add(NewUser(id: user.id, name: "Ada", email: "ada@example.com"), by: alice)
        #expect(back.version == 3, "after version 2, not 1 again")
        #expect(try await store.fetchUser(id: user.id).version == 3)
        var overwrite = stale
        overwrite.email = "stale@example.com"
        await #expect(throws: UserError.conflict(stored: back)) { _ = try await store.update(overwrite, by: bob) }
        let fresh = try await store.add(NewUser(name: "Bea", email: "bea@example.com"), by: alice)
        #expect(fresh.version == 1, "a new id starts at 1")
    }

    @Test(arguments: StoreKind.allCases)
    func pagesAreNewestFirstByKeysetAndFilterByActorAndTime(kind: StoreKind) async throws {
        let (store, _) = try open(kind)
        var user = try await store.add(NewUser(name: "Name 0", email: "n@example.com"), by: alice)
        for index in 1...25 {
            user.name = "Name \(index)"
            user = try await store.update(user, by: index.isMultiple(of: 5) ? bob : alice)
        }
        var names: [String] = []
        var before: Int64?
        repeat {
            let page = try await store.history(HistoryQuery(userID: user.id, before: before, limit: 10))
            names += page.entries.compactMap(\.after?.name)
            before = page.next
        } while before != nil
        #expect(names == (0...25).reversed().map { "Name \($0)" })
        let all = try await store.history(HistoryQuery(userID: user.id, limit: 100)).entries
        let newer = try await store.history(HistoryQuery(userID: user.id, after: all[3].id))
        #expect(newer.entries == Array(all.prefix(3)))
        let bobs = try await store.history(HistoryQuery(actorUID: 1002))
        #expect(bobs.entries.compactMap(\.after?.name) == ["Name 25", "Name 20", "Name 15", "Name 10", "Name 5"])
        #expect(try await store.history(HistoryQuery(since: Date().addingTimeInterval(3_600))).entries.isEmpty)
        #expect(try await store.history(HistoryQuery(since: Date().addingTimeInterval(-3_600), limit: 100)).entries.count == 26)
    }

    @Test(arguments: StoreKind.allCases)
    func revertThroughTheStoreIsAnOrdinarySaveWithTheVersionCheck(kind: StoreKind) async throws {
        let (store, _) = try open(kind)
        let user = try await store.add(NewUser(name: "Linus", email: "linus@example.com"), by: alice)
        let renamed = try await UpdateUserUseCase(repository: store, author: bob).rename(user, to: "Linus T")
        let entry = try #require(try await store.history(HistoryQuery(userID: user.id)).entries.first)
        let revert = RevertHistoryEntryUseCase(history: store, users: store, author: alice)
        #expect(try await revert.execute(entry: entry.id)?.name == "Linus")
        let undo = try #require(try await store.history(HistoryQuery(userID: user.id)).entries.first)
        #expect(undo.author.reverting == entry.id && undo.author.userName == "alice")
        // Reverting the same entry again: it is undone already, which is not a conflict, and
        // writes nothing.
        await #expect { try await revert.execute(entry: entry.id) } throws: { error in
            guard case .alreadyUndone(entry.id, let reason) = error as? UserError else { return false }
            return reason.contains("Linus")
        }
        #expect(try await store.history(HistoryQuery(userID: user.id)).entries.count == 3)
        #expect(try await store.fetchUser(id: user.id).version == 3)
        #expect(renamed.version == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func retentionPrunesOnlyEntriesOlderThanTheCutoff(kind: StoreKind) async throws {
        let (store, _) = try open(kind)
        for index in 0..<10 {
            _ = try await store.add(NewUser(name: "U\(index)", email: "u\(index)@example.com"), by: alice)
        }
        #expect(try await store.pruneHistory(before: Date().addingTimeInterval(-3_600)) == 0)
        #expect(try await store.history(HistoryQuery(limit: 100)).entries.count == 10)
        let kept = try #require(try await store.history(HistoryQuery(limit: 1)).entries.first)
        #expect(try await store.pruneHistory(before: Date().addingTimeInterval(3_600)) == 10)
        #expect(try await store.history(HistoryQuery(limit: 100)).entries.isEmpty)
        // A pruned entry is not found (a caller's mistake to report), not a store failure.
        await #expect(throws: UserError.noHistoryEntry(entry: kept.id)) { try await store.historyEntry(kept.id) }
    }

    @Test(arguments: StoreKind.allCases)
    func anotherInstanceOnTheSameStoreSeesTheSameHistory(kind: StoreKind) async throws {
        let (store, fixture) = try open(kind)
        let user = try await store.add(NewUser(name: "Shared", email: "shared@example.com"), by: alice)
        let other = try #require(try fixture.open() as? any UserHistoryRepository)
        let seen = try await other.history(HistoryQuery(userID: user.id)).entries
        #expect(seen.map(\.author.daemon) == ["host-a"])
        #expect(seen.first?.via(seenFrom: "host-b") == .anotherDaemon)
    }
}
