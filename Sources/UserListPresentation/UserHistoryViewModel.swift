import Foundation
import UserListDomain

/// A user's history screen: entries newest first, a page at a time, a new change at the top as
/// it happens, and undo (`revert`).
///
/// Owned by one actor like the other screens: every intent takes the owner's isolation, and
/// state changes only there. State is read-only outside; intents are methods; one-shot outcomes
/// go out as `onEvent`.
public final class UserHistoryViewModel {
    public private(set) var state: UserHistoryState {
        didSet { if state != oldValue { onStateChange?() } }
    }
    public var onStateChange: (() -> Void)?
    public var onEvent: ((UserHistoryEvent) -> Void)?

    public typealias Load = Task<Result<Void, UserError>, Never>

    /// Replaced when the session's client is renamed (`Navigator.reauthor`).
    var useCases: UserUseCases
    private let pageSize: Int
    private var next: Int64?
    private var loadTask: Load?
    /// Which load is current: a refresh supersedes a load in flight.
    private var loadGeneration = 0
    /// Reads of entries newer than the top, one at a time; a change during one asks for another.
    private var topTask: Task<Void, Never>?
    private var topAgain = false

    public var userID: UUID { state.userID }

    public init(userID: UUID, useCases: UserUseCases, pageSize: Int = FetchHistoryUseCase.defaultPageSize) {
        self.state = UserHistoryState(userID: userID)
        self.useCases = useCases
        self.pageSize = pageSize
    }

    deinit {
        loadTask?.cancel()
        topTask?.cancel()
    }

    // MARK: intents

    /// Reads the first page, once.
    @discardableResult
    public func onAppear(isolation: isolated (any Actor) = #isolation) -> Load {
        if let loadTask { return loadTask }
        guard state.entries.isEmpty else { return Load { .success(()) } }
        return load(reset: true, isolation: isolation)
    }

    /// Reads the newest entries again, from the top.
    @discardableResult
    public func refresh(isolation: isolated (any Actor) = #isolation) -> Load {
        loadTask?.cancel()
        loadTask = nil
        return load(reset: true, isolation: isolation)
    }

    /// The person reached row `index`: near the end of what is loaded, the next page is read.
    @discardableResult
    public func didDisplayRow(at index: Int, isolation: isolated (any Actor) = #isolation) -> Load? {
        guard state.hasMore, loadTask == nil, index >= state.entries.count - 3 else { return nil }
        return load(reset: false, isolation: isolation)
    }

    /// Undoes entry `id`: the inverse is saved as any save is, with the version check (a user
    /// changed since is a conflict, shown as the error). The undo appears at the top as its own
    /// entry, through `apply`, like any change.
    @discardableResult
    public func revert(entry id: Int64,
                       isolation: isolated (any Actor) = #isolation) -> Task<Result<User?, UserError>, Never> {
        guard let revert = useCases.revert else {
            let refusal = UserError.unavailable(reason: "this store keeps no history, so nothing can be undone")
            state.errorMessage = refusal.message
            return Task { .failure(refusal) }
        }
        var reverting = state
        reverting.reverting = id
        reverting.errorMessage = nil
        state = reverting
        return Task {
            _ = isolation
            let result: Result<User?, UserError>
            do throws(UserError) {
                result = .success(try await revert.execute(entry: id))
            } catch {
                result = .failure(error)
            }
            var updated = self.state
            updated.reverting = nil
            if case .failure(let error) = result { updated.errorMessage = self.message(for: error, reverting: id) }
            self.state = updated
            if case .success(let user) = result { self.onEvent?(.didRevert(entry: id, user: user)) }
            return result
        }
    }

    public func dismissError() { state.errorMessage = nil }

    // MARK: live updates

    /// A change committed anywhere: one to this user brings its entry (and any other new ones)
    /// to the top. `.resync` reads the first page again.
    public func apply(_ change: UserChange, isolation: isolated (any Actor) = #isolation) {
        if case .resync = change {
            refresh(isolation: isolation)
            return
        }
        guard change.userID == state.userID, let history = useCases.history else { return }
        guard topTask == nil else {
            topAgain = true
            return
        }
        topTask = Task {
            _ = isolation
            repeat {
                self.topAgain = false
                let newest = self.state.entries.first?.id
                if let page = try? await history.user(self.state.userID, newerThan: newest, limit: self.pageSize) {
                    // Entries a page load brought meanwhile are not added twice.
                    let known = Set(self.state.entries.map(\.id))
                    let fresh = page.entries.filter { !known.contains($0.id) }
                    if !fresh.isEmpty { self.state.entries.insert(contentsOf: fresh, at: 0) }
                }
            } while self.topAgain && !Task.isCancelled
            self.topTask = nil
        }
    }

    /// Waits for the reads a change started (tests, and a host that wants the top settled).
    public func settle(isolation: isolated (any Actor) = #isolation) async {
        while true {
            if let topTask {
                await topTask.value
            } else if let loadTask {
                _ = await loadTask.value
            } else {
                return
            }
        }
    }

    // MARK: loading

    private func load(reset: Bool, isolation: isolated (any Actor)) -> Load {
        guard let history = useCases.history else {
            state.errorMessage = UserError.unavailable(reason: "this store keeps no history").message
            return Load { .failure(.unavailable(reason: "this store keeps no history")) }
        }
        var loading = state
        loading.loading = reset ? .firstPage : .nextPage
        loading.errorMessage = nil
        state = loading
        let before = reset ? nil : next
        loadGeneration += 1
        let generation = loadGeneration
        let task = Load {
            _ = isolation
            // A refresh started meanwhile replaced this load: its outcome is the one shown.
            defer { if generation == self.loadGeneration { self.loadTask = nil } }
            do throws(UserError) {
                let page = try await history.user(self.state.userID, before: before, limit: self.pageSize)
                guard generation == self.loadGeneration else { return .success(()) }
                var updated = self.state
                if reset {
                    updated.entries = page.entries
                } else {
                    let known = Set(updated.entries.map(\.id))
                    updated.entries += page.entries.filter { !known.contains($0.id) }
                }
                self.next = page.next
                updated.hasMore = page.next != nil
                updated.loading = .none
                self.state = updated
                return .success(())
            } catch {
                guard generation == self.loadGeneration else { return .failure(error) }
                var updated = self.state
                updated.loading = .none
                updated.errorMessage = error.message
                self.state = updated
                return .failure(error)
            }
        }
        loadTask = task
        return task
    }

    /// A conflict says who changed the user after entry `id`, what and when (from the entries
    /// on screen), and what to do about it.
    func message(for error: UserError, reverting id: Int64) -> String {
        guard case .conflict(let stored) = error else { return error.message }
        if let version = state.entries.first(where: { $0.id == id })?.versionAfter,
           let story = ConflictStory.since(version, in: state.entries) {
            return "This change cannot be undone: since it, \(story) Undo the later changes first."
        }
        return "This change cannot be undone: the user was changed after it "
            + "(now “\(stored.name)”, version \(stored.version)). Undo the later changes first."
    }
}
