import Foundation
import UserListDomain

/// The paginated user list (seed 001's `UserListViewModel`), without Combine.
///
/// Not thread-safe by design: it belongs to one actor (a daemon session, or the main actor in
/// tests) and every intent takes that actor as its `isolation`, so the loads it starts run there
/// too. State is read-only from outside; `onStateChange` fires after every change, including the
/// ones async completions make, so the host knows when to diff.
public final class UserListViewModel {
    /// Rows closer than this to the end of the list make `didDisplayRow(at:)` fetch the next page.
    public static let prefetchDistance = 3

    public private(set) var state = UserListState() {
        didSet { if state != oldValue { onStateChange?() } }
    }
    public var onStateChange: (() -> Void)?
    public var onEvent: ((UserListEvent) -> Void)?

    private let useCases: UserUseCases
    private let pageSize: Int
    private var next: PageCursor?
    private var hasLoaded = false
    /// The load in flight. A new load cancels it, and `loadGeneration` stops a load that finishes
    /// anyway (cancellation is cooperative) from overwriting newer state.
    private var loadTask: Task<Void, Never>?
    private var loadGeneration = 0

    public init(useCases: UserUseCases, pageSize: Int = FetchUserPageUseCase.defaultPageSize) {
        self.useCases = useCases
        self.pageSize = pageSize
    }

    deinit { loadTask?.cancel() }

    // MARK: intents

    /// Loads the first page once; later appearances keep what is shown.
    public func onAppear(isolation: isolated (any Actor) = #isolation) {
        guard !hasLoaded else { return }
        hasLoaded = true
        load(reset: true, isolation: isolation)
    }

    public func refresh(isolation: isolated (any Actor) = #isolation) {
        hasLoaded = true
        load(reset: true, isolation: isolation)
    }

    /// Starts a new listing filtered by a name or email prefix; empty text lists everyone.
    public func search(_ text: String, isolation: isolated (any Actor) = #isolation) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        hasLoaded = true
        load(reset: true, search: .some(trimmed.isEmpty ? nil : trimmed), isolation: isolation)
    }

    /// The view reports each row it shows; near the end, the next page is fetched.
    public func didDisplayRow(at index: Int, isolation: isolated (any Actor) = #isolation) {
        guard state.hasMore, state.loading == .none,
              index >= state.users.count - Self.prefetchDistance else { return }
        load(reset: false, isolation: isolation)
    }

    public func didSelectRow(at index: Int) {
        guard state.users.indices.contains(index) else { return }
        onEvent?(.userSelected(id: state.users[index].id))
    }

    public func dismissError() {
        state.errorMessage = nil
    }

    /// Whether `index` names a row on screen (hosts use it to reject bad intents clearly).
    public func hasRow(at index: Int) -> Bool { state.users.indices.contains(index) }

    // MARK: live updates

    /// Applies a change committed anywhere (another session, another process) to the rows shown.
    /// Rows stay in the store's order (name, case-insensitively, then id); a row that sorts past
    /// the loaded rows while more pages exist is left for the page that will bring it.
    public func apply(_ change: UserChange) {
        var users = state.users
        switch change {
        case .saved(let user):
            guard let index = users.firstIndex(where: { $0.id == user.id }) else {
                return  // not loaded here; a later page brings it
            }
            if users[index] == user { return }
            users.remove(at: index)
            if matchesSearch(user) { insertSorted(user, into: &users) } else { adjustTotal(by: -1) }
        case .added(let user):
            guard matchesSearch(user), !users.contains(where: { $0.id == user.id }) else { return }
            insertSorted(user, into: &users)
            adjustTotal(by: 1)
        case .removed(let id):
            guard let index = users.firstIndex(where: { $0.id == id }) else {
                adjustTotal(by: -1)
                return
            }
            users.remove(at: index)
            adjustTotal(by: -1)
        }
        state.users = users
    }

    // MARK: loading

    /// Starts a load. `search`, when given, replaces the active search in the same state change.
    /// The error is cleared and the loading indicator shown in one change, so a host never sees
    /// an in-between "not loading, no error" frame.
    private func load(reset: Bool, search newSearch: String?? = .none, isolation: isolated (any Actor)) {
        loadTask?.cancel()
        loadGeneration += 1
        let generation = loadGeneration
        let cursor = reset ? nil : next
        var updated = state
        if case .some(let replacement) = newSearch { updated.search = replacement }
        updated.errorMessage = nil  // a retry must not keep showing the last failure (seed 000)
        updated.loading = reset ? .fullScreen : .nextPage
        let search = updated.search
        state = updated
        loadTask = Task {
            _ = isolation  // run on the owner's actor
            let result: Result<UserPage, UserError>
            do throws(UserError) {
                result = .success(try await self.useCases.fetchPage.execute(
                    after: cursor, search: search, limit: self.pageSize))
            } catch {
                result = .failure(error)
            }
            self.finishLoad(result, reset: reset, generation: generation)
        }
    }

    private func finishLoad(_ result: Result<UserPage, UserError>, reset: Bool, generation: Int) {
        guard generation == loadGeneration else { return }  // superseded: newer state wins
        var updated = state
        updated.loading = .none
        switch result {
        case .success(let page):
            if reset {
                updated.users = page.users
            } else {
                let known = Set(updated.users.map(\.id))
                updated.users.append(contentsOf: page.users.filter { !known.contains($0.id) })
            }
            next = page.next
            updated.hasMore = page.hasMore
            updated.totalCount = page.totalCount
            updated.isStale = page.isStale
        case .failure(let error):
            updated.errorMessage = error.message
        }
        state = updated
        loadTask = nil
    }

    // MARK: ordering

    private func insertSorted(_ user: User, into users: inout [User]) {
        let key = Self.sortKey(user)
        let index = users.firstIndex { Self.sortKey($0) > key } ?? users.endIndex
        if index == users.endIndex && state.hasMore { return }  // belongs to a page not loaded yet
        users.insert(user, at: index)
    }

    private static func sortKey(_ user: User) -> SortKey {
        SortKey(name: user.name.lowercased(), id: user.id.uuidString.lowercased())
    }

    private struct SortKey: Comparable {
        let name: String
        let id: String
        static func < (a: SortKey, b: SortKey) -> Bool { (a.name, a.id) < (b.name, b.id) }
    }

    private func matchesSearch(_ user: User) -> Bool {
        guard let search = state.search?.lowercased() else { return true }
        return user.name.lowercased().hasPrefix(search) || user.email.lowercased().hasPrefix(search)
    }

    private func adjustTotal(by delta: Int) {
        if let total = state.totalCount { state.totalCount = max(0, total + delta) }
    }
}
