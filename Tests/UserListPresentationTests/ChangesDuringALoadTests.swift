import Foundation
import Testing
import UserListDomain
import UserListPresentation
import UserListTestSupport

/// A change that commits while a page is on its way: the page was read before it, so the rows it
/// brings must not undo the change on screen. And a change the page already holds must not be
/// counted twice.
@MainActor
@Suite struct ChangesDuringALoadTests {
    let repository = FakeUserRepository()
    let feed = FakeChangeFeed()
    let navigator: Navigator
    /// Beats after every state the navigator publishes.
    let changes: Pulse

    init() {
        navigator = Navigator(useCases: UserUseCases(repository: repository))
        changes = stateChanges(of: navigator)
        navigator.follow(feed)
    }

    private var list: UserListState { navigator.list.state }

    /// Shows `users` (in name order), then starts a reload whose page is read now (from what the
    /// store holds) and held back until `finish()`.
    private func reloadHeld(showing users: [User]) async {
        for user in users { repository.put(user) }
        navigator.list.onAppear()
        await changes.expect { list.loading == .none && list.users == users }
        repository.hold(.fetchPage)
        navigator.list.refresh()
        await repository.awaitHeldCalls(1)
    }

    private func deliver(_ change: UserChange) async {
        let applied = navigator.list.state
        feed.send(change)
        await changes.expect { navigator.list.state != applied }
    }

    private func finish() async {
        repository.release()
        await changes.expect { list.loading == .none }
    }

    @Test func aSaveCommittedAfterThePageWasReadSurvivesThePage() async {
        await reloadHeld(showing: [ada, bob, cleo])
        var bobby = bob
        bobby.name = "Bobby Dylan"
        bobby.version = 2
        repository.put(bobby)
        await deliver(.saved(bobby))
        await finish()
        #expect(list.users == [ada, bobby, cleo])
        #expect(list.totalCount == 3)
    }

    @Test func anAdditionCommittedAfterThePageWasReadSurvivesThePage() async {
        await reloadHeld(showing: [ada, bob, cleo])
        repository.put(dora)
        await deliver(.added(dora))
        await finish()
        #expect(list.users == [ada, bob, cleo, dora])
        #expect(list.totalCount == 4)
    }

    @Test func aRemovalCommittedAfterThePageWasReadSurvivesThePage() async {
        await reloadHeld(showing: [ada, bob, cleo])
        repository.delete(cleo.id)
        await deliver(.removed(id: cleo.id))
        await finish()
        #expect(list.users == [ada, bob])
        #expect(list.totalCount == 2)
    }

    @Test func changesThePageAlreadyHoldsAreNotCountedTwice() async {
        for user in [ada, bob, cleo] { repository.put(user) }
        navigator.list.onAppear()
        await changes.expect { list.loading == .none && list.users == [ada, bob, cleo] }
        // Committed before the page is read, delivered while it is on its way.
        repository.put(dora)
        repository.delete(ada.id)
        repository.hold(.fetchPage)
        navigator.list.refresh()
        await repository.awaitHeldCalls(1)
        await deliver(.added(dora))
        await deliver(.removed(id: ada.id))
        await finish()
        #expect(list.users == [bob, cleo, dora])
        #expect(list.totalCount == 3)
    }
}
