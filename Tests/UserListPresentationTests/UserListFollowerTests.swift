import Foundation
import Testing
import UserListDomain
import UserListPresentation

/// A host may advance an idle list through others' changes without the ViewModel
/// (`UserListFollower`); the ViewModel then takes exactly those states as its own. Where the
/// ViewModel would do more than apply (a trim, a resync) or is loading, there is no follower
/// outcome and the ViewModel applies the change itself.
@MainActor
@Suite struct UserListFollowerTests {
    private func loaded(_ users: [User], pageSize: Int = 50) async -> UserListViewModel {
        let list = UserListViewModel(useCases: UserUseCases(repository: FakeUserRepository(users)), pageSize: pageSize)
        _ = await list.onAppear().value
        return list
    }

    @Test func aFollowedListIsWhatTheViewModelComputesAndTheViewModelTakesIt() async throws {
        let list = await loaded([ada, bob, cleo])
        let control = await loaded([ada, bob, cleo])
        var follower = try #require(list.follower)
        var bobby = bob
        bobby.name = "Aaron Bobby"
        bobby.version = 2
        let changes: [UserChange] = [.saved(bobby), .added(dora), .removed(id: ada.id)]
        for change in changes {
            follower = try #require(follower.following(change, sharing: SharedListOutcomes()))
            control.apply(change, markingStale: true)
        }
        #expect(follower.state == control.state, "the ViewModel's own rule")
        #expect(follower.state.users.map(\.name) == ["Aaron Bobby", "Cleo Laine", "Dora Maar"])
        #expect(follower.state.isStale, "a change made elsewhere marks the list stale")

        // Catching up, the ViewModel takes the state that was sent, in one state change, and
        // goes on from it as if it had applied the changes itself: its next page follows.
        var published = 0
        list.onStateChange = { published += 1 }
        list.catchUp(to: follower)
        #expect(SharedListOutcomes.isSameValue(list.state, follower.state))
        #expect(published == 1, "one state change for the whole catch-up")
        control.apply(.removed(id: cleo.id), markingStale: true)
        list.apply(.removed(id: cleo.id), markingStale: true)
        #expect(list.state == control.state)
    }

    @Test func aListLoadingHasNoFollower() async {
        let repository = FakeUserRepository([ada, bob])
        let list = UserListViewModel(useCases: UserUseCases(repository: repository))
        repository.hold(.fetchPage)
        let load = list.onAppear()
        await waitUntil { !repository.heldCalls.isEmpty }
        #expect(list.follower == nil)
        repository.releaseAll()
        _ = await load.value
        #expect(list.follower != nil)
    }

    @Test func whatOnlyTheViewModelCanDoIsLeftToIt() async throws {
        // Two rows loaded of three: a new first row would push one past what the pages loaded,
        // and the ViewModel trims it (moving its cursor).
        let list = await loaded([bob, cleo, dora], pageSize: 2)
        let follower = try #require(list.follower)
        #expect(follower.following(.added(ada), sharing: SharedListOutcomes()) == nil)
        #expect(follower.following(.resync, sharing: SharedListOutcomes()) == nil)
        // A change within what is loaded is followed.
        var cleopatra = cleo
        cleopatra.name = "Abe Cleo"
        cleopatra.version = 2
        #expect(follower.following(.saved(cleopatra), sharing: SharedListOutcomes())?.state.users.map(\.name) == ["Abe Cleo", "Bob Dylan"])
    }
}
