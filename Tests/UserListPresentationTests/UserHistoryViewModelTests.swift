import Foundation
import Testing
import UserListDomain
import UserListPresentation

/// The history screen as a person uses it: newest first a page at a time, a change appearing
/// at the top as it happens, and undo with its conflict. Every state an intent causes is asserted.
@MainActor
@Suite struct UserHistoryViewModelTests {
    let alice = ChangeAuthor(uid: 1001, userName: "alice", client: "userctl", via: .intent)
    let bob = ChangeAuthor(uid: 1002, userName: "bob", client: "userctl", via: .intent)

    /// A store where ada was renamed `count` times by alice ("Ada 1" … "Ada count").
    func store(renames count: Int) async throws -> FakeHistoryStore {
        let store = FakeHistoryStore([ada])
        var user = ada
        for index in 0..<count {
            user.name = "Ada \(index + 1)"
            user = try await store.update(user, by: alice)
        }
        return store
    }

    func makeHistory(_ store: FakeHistoryStore, author: ChangeAuthor? = nil, pageSize: Int = 3)
        -> (UserHistoryViewModel, StateRecorder<UserHistoryState>, EventLog<UserHistoryEvent>) {
        var useCases = UserUseCases(repository: store, history: store)
        if let author { useCases = useCases.authored(by: author) }
        let history = UserHistoryViewModel(userID: ada.id, useCases: useCases, pageSize: pageSize)
        let states = StateRecorder(history.state)
        let events = EventLog<UserHistoryEvent>()
        history.onStateChange = { [unowned history] in states.record(history.state) }
        history.onEvent = { events.append($0) }
        return (history, states, events)
    }

    @Test func theFirstPageIsNewestFirstAndScrollingReadsOlderPages() async throws {
        let store = try await store(renames: 8)
        let all = try await store.history(HistoryQuery(userID: ada.id, limit: 10)).entries
        let (history, states, _) = makeHistory(store, pageSize: 5)

        history.onAppear()
        states.expect { $0.loading = .firstPage }
        await states.receive { $0.entries = Array(all[0..<5]); $0.hasMore = true; $0.loading = .none }
        #expect(history.state.entries.map(\.after?.name) == ["Ada 8", "Ada 7", "Ada 6", "Ada 5", "Ada 4"])

        #expect(history.didDisplayRow(at: 1) == nil)  // far from the end: nothing to read
        history.didDisplayRow(at: 3)
        states.expect { $0.loading = .nextPage }
        await states.receive { $0.entries = all; $0.hasMore = false; $0.loading = .none }
        #expect(history.didDisplayRow(at: 7) == nil)  // the last page was read
        states.expectNoMoreChanges()
    }

    @Test func aChangeToThisUserAppearsAtTheTopAndOneToAnotherUserReadsNothing() async throws {
        let store = try await store(renames: 2)
        let (history, states, _) = makeHistory(store)
        _ = await history.onAppear().value
        states.expect { $0.loading = .firstPage }
        states.expect { $0.entries = history.state.entries; $0.loading = .none }

        let current = try await store.fetchUser(id: ada.id)
        let saved = try await UpdateUserUseCase(repository: store, author: bob).rename(current, to: "Countess")
        let top = try await newest(store)
        let reads = store.historyReads
        history.apply(.saved(cleo))  // another user's change: not this screen's
        history.apply(.saved(saved))
        await states.receive { $0.entries.insert(top, at: 0) }
        #expect(history.state.entries.first?.author.userName == "bob")
        #expect(history.state.entries.first?.after?.name == "Countess")
        await history.settle()
        #expect(store.historyReads == reads + 1)
        states.expectNoMoreChanges()
    }

    @Test func revertUndoesTheEntryAndTheUndoArrivesAtTheTopAsItsOwnEntry() async throws {
        let store = try await store(renames: 1)
        let (history, states, events) = makeHistory(store, author: bob)
        _ = await history.onAppear().value
        states.expect { $0.loading = .firstPage }
        states.expect { $0.entries = history.state.entries; $0.loading = .none }
        let renamed = try #require(history.state.entries.first)

        let revert = history.revert(entry: renamed.id)
        states.expect { $0.reverting = renamed.id }
        let restored = try await revert.value.get()
        states.expect { $0.reverting = nil }
        #expect(restored?.name == "Ada Lovelace")
        #expect(events.all == [.didRevert(entry: renamed.id, user: restored)])

        let top = try await newest(store)
        history.apply(.saved(try #require(restored)))  // as the change feed delivers it
        await states.receive { $0.entries.insert(top, at: 0) }
        let undo = try #require(history.state.entries.first)
        #expect(undo.author.userName == "bob" && undo.author.reverting == renamed.id)
        #expect(undo.after?.name == "Ada Lovelace")
    }

    @Test func revertingAnEntryTheUserChangedSinceIsAConflictShownAsTheError() async throws {
        let store = try await store(renames: 2)
        let (history, states, events) = makeHistory(store, author: bob)
        _ = await history.onAppear().value
        states.expect { $0.loading = .firstPage }
        states.expect { $0.entries = history.state.entries; $0.loading = .none }
        let older = try #require(history.state.entries.last)  // "Ada 1": "Ada 2" came after it

        let result = await history.revert(entry: older.id).value
        states.expect { $0.reverting = older.id }
        guard case .failure(.conflict(let stored)) = result else { Issue.record("\(result)"); return }
        #expect(stored.name == "Ada 2")
        states.expect {
            $0.reverting = nil
            // Who changed it since, what and when, from the entries on screen (as `userctl revert` says it).
            $0.errorMessage = "This change cannot be undone: since it, alice changed the name to “Ada 2” just now. "
                + "Undo the later changes first."
        }
        #expect(events.all.isEmpty)
        #expect(try await store.fetchUser(id: ada.id).name == "Ada 2")
        history.dismissError()
        states.expect { $0.errorMessage = nil }
    }

    @Test func aFailedReadShowsTheErrorAndRefreshReadsAgain() async throws {
        let store = try await store(renames: 1)
        store.failNextHistoryRead(with: .unavailable(reason: "the disk is full"))
        let (history, states, _) = makeHistory(store)
        _ = await history.onAppear().value
        states.expect { $0.loading = .firstPage }
        states.expect { $0.loading = .none; $0.errorMessage = "The user store is unavailable: the disk is full" }
        _ = await history.refresh().value
        states.expect { $0.loading = .firstPage; $0.errorMessage = nil }
        states.expect { $0.entries = history.state.entries; $0.loading = .none }
        #expect(history.state.entries.count == 1)
    }

    @Test func aStoreWithoutHistorySaysSo() async {
        let history = UserHistoryViewModel(userID: ada.id, useCases: UserUseCases(repository: FakeUserRepository([ada])))
        guard case .failure(.unavailable) = await history.onAppear().value else { Issue.record("read without history"); return }
        #expect(history.state.errorMessage?.contains("keeps no history") == true)
    }

    private func newest(_ store: FakeHistoryStore) async throws -> HistoryEntry {
        try #require(try await store.history(HistoryQuery(userID: ada.id, limit: 1)).entries.first)
    }
}
