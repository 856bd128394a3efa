import Foundation
import Testing
import UserListDomain
import UserListPresentation

/// The screen stack: list → detail and back, saves reaching the list, restoring after a restart.
@MainActor
@Suite struct NavigatorTests {
    let repository = FakeUserRepository([ada, bob, cleo])
    let navigator: Navigator
    let states: StateRecorder<NavigationState>
    let events = EventLog<NavigatorEvent>()

    init() {
        navigator = Navigator(useCases: UserUseCases(repository: repository))
        states = StateRecorder(navigator.state)
        navigator.onStateChange = { [navigator, states] in states.record(navigator.state) }
        navigator.onEvent = { [events] in events.append($0) }
    }

    private var loadedList: UserListState {
        var list = UserListState()
        list.users = [ada, bob, cleo]
        list.totalCount = 3
        return list
    }

    private func loadList() async {
        navigator.list.onAppear()
        states.expect { $0.screens = [.list(self.listLoading())] }
        await states.receive { $0.screens = [.list(self.loadedList)] }
    }

    private func listLoading() -> UserListState {
        var list = UserListState()
        list.loading = .fullScreen
        return list
    }

    private func detail(_ user: User?, id: UUID? = nil, draft: String? = nil) -> NavigationState.ScreenState {
        var state = UserDetailState(userID: id ?? user!.id)
        state.user = user
        state.draft = user.map(UserFields.init) ?? UserFields(name: "", email: "")
        if let draft { state.draftName = draft }
        return .detail(state)
    }

    @Test func theStackStartsWithTheListAlone() {
        #expect(navigator.state == NavigationState(screens: [.list(UserListState())]))
        #expect(navigator.screens.count == 1)
        #expect(navigator.topDetail == nil)
    }

    @Test func selectRowOpensTheDetailOnTopAndLoadsIt() async {
        await loadList()
        let opened = await navigator.selectRow(at: 1)
        #expect(opened == .success(bob))
        #expect(events.all == [.list(.userSelected(id: bob.id))])
        #expect(navigator.screens.count == 2)
        #expect(navigator.topDetail?.userID == bob.id)
        // The user is fetched first: the screen arrives loaded, in one change.
        states.expect { $0.screens.append(self.detail(bob)) }
        #expect(repository.calls(of: .fetchUser) == [.fetchUser(bob.id)])
        states.expectNoMoreChanges()
    }

    /// The store down (or the user gone) when a row is opened: the list says why, and stays.
    @Test(arguments: [UserError.unavailable(reason: "the database is restarting"), .notFound(id: bob.id)])
    func aRowThatCannotBeOpenedSaysWhyOnTheList(failure: UserError) async {
        await loadList()
        repository.failNext(1, .fetchUser, with: failure)
        #expect(await navigator.selectRow(at: 1) == .failure(failure))
        #expect(navigator.screens.count == 1)
        states.expect {
            var list = self.loadedList
            list.errorMessage = failure.message
            $0.screens[0] = .list(list)
        }
        states.expectNoMoreChanges()
        #expect(await navigator.selectRow(at: 1) == .success(bob), "once the store is back it opens")
    }

    @Test(arguments: [-1, 3, 50])
    func selectRowOutOfRangeDoesNothing(index: Int) async {
        await loadList()
        #expect(await navigator.selectRow(at: index) == nil)
        await settle()
        #expect(navigator.screens.count == 1)
        #expect(events.all.isEmpty)
        states.expectNoMoreChanges()
        #expect(repository.count(of: .fetchUser) == 0)
    }

    @Test func aSelectionMadeOnTheListDirectlyIsNotOpenedByALaterBadSelectRow() async {
        await loadList()
        navigator.list.didSelectRow(at: 0)   // a host talking to the list itself
        #expect(events.all == [.list(.userSelected(id: ada.id))])
        #expect(await navigator.selectRow(at: 99) == nil)
        #expect(navigator.screens.count == 1)
        states.expectNoMoreChanges()
    }

    @Test func backPopsTheTopButNeverTheList() async {
        await loadList()
        await navigator.selectRow(at: 0)
        states.expect { $0.screens.append(self.detail(ada)) }
        await navigator.openUser(cleo.id)
        states.expect { $0.screens[1] = self.detail(cleo) }
        #expect(navigator.topDetail?.userID == cleo.id)
        #expect(navigator.screens.count == 2, "opening a user replaces the open detail screen")

        #expect(navigator.back())
        states.expect { $0.screens.removeLast() }
        #expect(navigator.topDetail == nil)
        #expect(!navigator.back())
        #expect(!navigator.back())
        states.expectNoMoreChanges()
        #expect(navigator.screens.count == 1)
        _ = navigator.list   // still there
    }

    @Test func aSaveOnTheDetailUpdatesTheListRow() async throws {
        await loadList()
        await navigator.selectRow(at: 1)
        states.expect { $0.screens.append(self.detail(bob)) }
        let detail = try #require(navigator.topDetail)

        detail.setDraftName("Aaron Bob")
        states.expect { $0.screens[1] = self.detail(bob, draft: "Aaron Bob") }
        detail.save()
        states.expect {
            guard case .detail(var d) = $0.screens[1] else { return }
            d.isSaving = true
            $0.screens[1] = .detail(d)
        }
        let saved = User(id: bob.id, name: "Aaron Bob", email: bob.email, version: 2)
        await states.receive { $0.screens[1] = self.detail(saved) }
        // The list follows in its own change: renamed and moved to its place in name order.
        states.expect {
            var list = self.loadedList
            list.users = [saved, ada, cleo]
            $0.screens[0] = .list(list)
        }
        #expect(events.all.suffix(1) == [.detail(.didSave(saved))])

        #expect(navigator.back())
        states.expect { $0.screens.removeLast() }
        states.expectNoMoreChanges()
    }

    @Test func theFeedReachesEveryScreenAndIsForwarded() async throws {
        let feed = FakeChangeFeed()
        navigator.follow(feed)
        await loadList()
        await navigator.selectRow(at: 0)
        states.expect { $0.screens.append(self.detail(ada)) }

        let renamed = User(id: ada.id, name: "Ada King", email: ada.email, version: 2)
        feed.send(.saved(renamed))
        await events.changes.expect { events.all.last == .changed(.saved(renamed)) }
        states.expect {
            var list = self.loadedList
            list.users = [renamed, bob, cleo]
            list.isStale = true  // changed elsewhere: the list says so
            $0.screens[0] = .list(list)
        }
        states.expect { $0.screens[1] = self.detail(renamed) }

        feed.send(.removed(id: ada.id))
        await events.changes.expect { events.all.last == .changed(.removed(id: ada.id)) }
        states.expect {
            var list = self.loadedList
            list.users = [bob, cleo]
            list.totalCount = 2
            list.isStale = true
            $0.screens[0] = .list(list)
        }
        states.expect {
            var removed = UserDetailState(userID: ada.id)
            removed.draft = UserFields(ada)
            removed.draftName = "Ada King"
            removed.errorMessage = "This user was removed."
            removed.removal = Removal(base: renamed)
            $0.screens[1] = .detail(removed)
        }
        states.expectNoMoreChanges()
    }

    @Test func openingAnUnknownUserLeavesNoScreen() async {
        await loadList()
        let unknown = UUID()
        #expect(await navigator.openUser(unknown) == .failure(.notFound(id: unknown)))
        #expect(navigator.screens.count == 1)
        states.expectNoMoreChanges()

        // Nor does it disturb an open detail screen.
        await navigator.openUser(bob.id)
        states.expect { $0.screens.append(self.detail(bob)) }
        #expect(await navigator.openUser(unknown) == .failure(.notFound(id: unknown)))
        #expect(navigator.topDetail?.userID == bob.id)
        states.expectNoMoreChanges()
    }

    @Test func aChangeMadeHereIsAppliedWithoutAnEventOrAStaleList() async {
        await loadList()
        let renamed = User(id: ada.id, name: "Ada King", email: ada.email, version: 2)
        navigator.apply(.saved(renamed), madeHere: true)
        states.expect {
            var list = self.loadedList
            list.users = [renamed, bob, cleo]
            $0.screens[0] = .list(list)
        }
        #expect(events.all.isEmpty, "the session that made the change is not told about it")
        #expect(!navigator.list.state.isStale)

        let bobby = User(id: bob.id, name: "Bobby", email: bob.email, version: 2)
        navigator.apply(.saved(bobby))
        #expect(events.all == [.changed(.saved(bobby))])
        #expect(navigator.list.state.isStale, "a change made elsewhere marks the list stale")
        #expect(navigator.list.state.users.contains(bobby))

        navigator.list.refresh()
        await states.until { navigator.list.state.loading == .none }
        #expect(!navigator.list.state.isStale, "refresh clears it")
    }

    @Test func restoringKeepsTheDetailDraftAfterTheUserReloads() async throws {
        await loadList()
        navigator.list.search("b")
        await states.until { navigator.list.state.loading == .none }
        await navigator.selectRow(at: 0)
        await states.until { navigator.topDetail?.state.user == bob }
        navigator.topDetail?.setDraftName("Robert")

        // The daemon writes the state out and starts again.
        let data = try JSONEncoder().encode(navigator.state)
        let saved = try JSONDecoder().decode(NavigationState.self, from: data)
        #expect(saved == navigator.state)
        let fetchesBefore = repository.count(of: .fetchUser)
        let pagesBefore = repository.count(of: .fetchPage)

        let restored = Navigator(restoring: saved, useCases: UserUseCases(repository: repository))
        let restoredStates = StateRecorder(restored.state)
        restored.onStateChange = { [restored] in restoredStates.record(restored.state) }
        #expect(restored.screens.count == 2)
        #expect(restored.list.state.search == "b")
        #expect(restored.list.state.loading == .fullScreen)

        await restoredStates.until { restored.list.state.loading == .none }
        await repository.awaitCalls(of: .fetchUser, count: fetchesBefore + 1)
        await settle()
        #expect(repository.count(of: .fetchPage) == pagesBefore + 1)
        #expect(repository.pageRequests.last?.search == "b")
        #expect(restored.list.state.users == [bob])
        let detail = try #require(restored.topDetail)
        #expect(detail.userID == bob.id)
        #expect(detail.state.user == bob)
        #expect(detail.state.draftName == "Robert")
        #expect(detail.state.isDirty && detail.state.canSave)
        #expect(restored.state.screens.count == 2)
    }

    /// A restart reads the list back as far as it had been read (whole pages), from the end
    /// when it had been read from there, so a client keeps its place in the rows.
    @Test func restoringReadsTheListAsFarAsItHadBeenRead() async {
        for user in numberedUsers(300) { repository.put(user) }
        let ordered = numberedUsers(300).sorted { $0.name < $1.name }  // the store's order
        let saved = NavigationState(screens: [.list(UserListState())])
        let restored = Navigator(restoring: saved, listWindow: UserListWindow(rows: 120, fromEnd: false),
                                 useCases: UserUseCases(repository: repository))
        await stateChanges(of: restored).expect {
            restored.list.state.loading == .none && !restored.list.state.users.isEmpty
        }
        #expect(restored.list.state.users == Array(ordered.prefix(150)))
        #expect(restored.list.state.hasMore)

        let fromEnd = Navigator(restoring: saved, listWindow: UserListWindow(rows: 60, fromEnd: true),
                                useCases: UserUseCases(repository: repository))
        await stateChanges(of: fromEnd).expect {
            fromEnd.list.state.loading == .none && !fromEnd.list.state.users.isEmpty
        }
        #expect(fromEnd.list.state.users == Array(ordered.suffix(100)))
        #expect(fromEnd.list.state.hasPrevious)
    }

    @Test func restoringWithoutASearchLoadsTheListOnce() async {
        let saved = NavigationState(screens: [.list(UserListState())])
        let restored = Navigator(restoring: saved, useCases: UserUseCases(repository: repository))
        await stateChanges(of: restored).expect { restored.list.state.loading == .none }
        restored.list.onAppear()
        await settle()
        #expect(repository.count(of: .fetchPage) == 1)
        #expect(restored.list.state.users == [ada, bob, cleo])
        #expect(restored.topDetail == nil)
    }
}
