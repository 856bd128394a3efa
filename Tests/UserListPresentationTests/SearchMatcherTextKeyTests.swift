import Foundation
import Testing
import UserListDomain
import UserListPresentation

/// A user added elsewhere joins a searched list when the store's own search would find them:
/// the live matcher uses the same TextKey as the store (accents, case, ß, dotted İ).
@MainActor
@Suite struct SearchMatcherTextKeyTests {
    let repository = FakeUserRepository()
    let feed = FakeChangeFeed()
    let navigator: Navigator
    let states: StateRecorder<UserListState>
    let events = EventLog<NavigatorEvent>()

    init() {
        navigator = Navigator(useCases: UserUseCases(repository: repository))
        states = StateRecorder(navigator.list.state)
        navigator.onStateChange = { [navigator, states] in states.record(navigator.list.state) }
        navigator.onEvent = { [events] in events.append($0) }
        navigator.follow(feed)
    }

    private func send(_ change: UserChange) async {
        let before = events.all.count
        feed.send(change)
        await events.awaitCount(before + 1)
    }

    private func search(_ text: String) async {
        navigator.list.search(text)
        states.expect { $0.search = text; $0.loading = .fullScreen }
        await states.receive { $0.loading = .none; $0.users = []; $0.totalCount = 0 }
    }

    @Test func accentedAndDecomposedNamesMatchAPlainSearch() async {
        await search("e")
        let precomposed = User(id: userID(120), name: "\u{C9}lodie Roy", email: "roy@example.com")
        let decomposed = User(id: userID(121), name: "E\u{301}mile Zola", email: "zola@example.com")
        await send(.added(precomposed))
        // A change made elsewhere also marks the list stale (PROTOCOL.md §5).
        states.expect { $0.users = [precomposed]; $0.totalCount = 1; $0.isStale = true }
        await send(.added(decomposed))
        states.expect { $0.users = [precomposed, decomposed]; $0.totalCount = 2 }
        states.expectNoMoreChanges()
    }

    @Test func sharpSAndDottedCapitalIMatchTheirFoldedSearch() async {
        await search("strass")
        let strasse = User(id: userID(130), name: "Straße Meier", email: "meier@example.com")
        await send(.added(strasse))
        states.expect { $0.users = [strasse]; $0.totalCount = 1; $0.isStale = true }
        await send(.added(User(id: userID(131), name: "İlkay", email: "ilkay@example.com")))  // not "strass"
        states.expectNoMoreChanges()
    }
}
