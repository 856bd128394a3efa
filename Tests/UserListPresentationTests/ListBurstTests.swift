import Foundation
import Testing
import UserListDomain
import UserListPresentation

/// A burst of changes from elsewhere (an import of many users) does not grow the list past the
/// rows its pages loaded: rows pushed past them wait on the next page, which brings them in
/// order, once each.
@MainActor
@Suite struct ListBurstTests {
    let repository = FakeUserRepository()
    let navigator: Navigator

    init() {
        navigator = Navigator(useCases: UserUseCases(repository: repository))
    }

    @Test func aBurstOfAddsKeepsTheLoadedRowsAndTheNextPageBringsTheRest() async {
        repository.setMakesCursors(true)
        // 50 users on even numbers: one full page, nothing more.
        let first = (0..<50).map { user($0 * 2, String(format: "User %03d", $0 * 2)) }
        for user in first { repository.put(user) }
        _ = await navigator.list.onAppear().value
        #expect(navigator.list.state.users == first && !navigator.list.state.hasMore)

        // 50 more, each sorting between two loaded rows, committed elsewhere.
        let added = (0..<50).map { user($0 * 2 + 1, String(format: "User %03d", $0 * 2 + 1)) }
        for user in added {
            repository.put(user)
            navigator.apply(.added(user))  // as the change feed delivers it
        }
        #expect(navigator.list.state.totalCount == 100)
        let state = navigator.list.state
        #expect(state.users.count == 50, "the list keeps the rows its pages loaded")
        #expect(state.hasMore, "the rows pushed out wait on the next page")
        #expect(state.users.map(\.name) == (0..<50).map { String(format: "User %03d", $0) })

        _ = await navigator.list.didDisplayRow(at: 49).value
        let all = navigator.list.state.users
        #expect(all.map(\.name) == (0..<100).map { String(format: "User %03d", $0) }, "every user once, in order")
        #expect(!navigator.list.state.hasMore)
    }

    @Test func aStoreWithoutCursorsKeepsEveryRowAsBefore() async {
        let first = (0..<50).map { user($0 * 2, String(format: "User %03d", $0 * 2)) }
        for user in first { repository.put(user) }
        _ = await navigator.list.onAppear().value
        let added = (0..<10).map { user($0 * 2 + 1, String(format: "User %03d", $0 * 2 + 1)) }
        for user in added { navigator.apply(.added(user)) }
        #expect(navigator.list.state.users.count == 60 && !navigator.list.state.hasMore)
    }

    /// Users with the same name sort by id as the store sorts them (the id's uppercase string),
    /// and a change past the loaded rows of a longer list is left to the next page.
    @Test func liveAddsOfNamesakesSortByIDAsTheStoreDoes() async {
        let namesakes = (0..<30).map { _ in User(id: UUID(), name: "Ada Lovelace", email: "\(UUID())@example.com") }
        _ = await navigator.list.onAppear().value
        for user in namesakes {
            repository.put(user)
            navigator.apply(.added(user))
        }
        let expected = namesakes.sorted { $0.id.uuidString < $1.id.uuidString }
        #expect(navigator.list.state.users.map(\.id) == expected.map(\.id))
    }
}
