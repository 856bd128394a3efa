import Foundation
import Testing
import UserListDomain
import UserListPresentation

/// The history screen on the stack: pushed from a user's detail screen, popped by back, following
/// changes like the other screens, and gone when another user is opened.
@MainActor
@Suite struct NavigatorHistoryTests {
    let store = FakeHistoryStore([ada, bob])
    let navigator: Navigator

    init() {
        navigator = Navigator(useCases: UserUseCases(repository: store, history: store)
            .authored(by: ChangeAuthor(uid: 1001, userName: "alice", via: .intent)))
    }

    @Test func historyIsPushedFromTheDetailScreenAndBackReturnsToIt() async throws {
        #expect(navigator.openHistory() == nil)  // no user open: nothing to show the history of
        _ = await navigator.openUser(ada.id)
        let detail = try #require(navigator.topDetail)
        detail.setDraftName("Ada King")
        _ = await detail.save().value
        _ = await navigator.openHistory()?.value
        guard case .history(let history)? = navigator.state.screens.last else { Issue.record("no history screen"); return }
        #expect(navigator.state.screens.count == 3)
        #expect(history.userID == ada.id)
        #expect(history.entries.map(\.after?.name) == ["Ada King"])
        #expect(history.entries.first?.author.userName == "alice")
        #expect(navigator.back())
        #expect(navigator.topDetail === detail)
    }

    @Test func aChangeReachesTheHistoryScreenAndOpeningAnotherUserReplacesIt() async throws {
        _ = await navigator.openUser(ada.id)
        _ = await navigator.openHistory()?.value
        let saved = try await UpdateUserUseCase(repository: store, author: ChangeAuthor(uid: 1002, userName: "bob", via: .command))
            .rename(ada, to: "Countess")
        navigator.apply(.saved(saved))
        let history = try #require(navigator.topHistory)
        await history.settle()
        #expect(history.state.entries.map(\.author.userName) == ["bob"])
        _ = await navigator.openUser(bob.id)
        #expect(navigator.state.screens.count == 2)
        #expect(navigator.topDetail?.userID == bob.id)
    }
}
