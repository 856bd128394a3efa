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

    public private(set) var state: UserListState {
        get { current }
        set {
            let changed = newValue != current
            current = newValue
            if changed { onStateChange?() }
        }
    }
    private var current = UserListState()
    public var onStateChange: (() -> Void)?
    public var onEvent: ((UserListEvent) -> Void)?

    /// Replaced when the session's client is renamed (`Navigator.reauthor`).
    var useCases: UserUseCases
    private let pageSize: Int
    private var next: PageCursor?
    /// Where the rows before the first loaded one are read from (`hasPrevious`).
    private var previous: PageCursor?
    /// Rows the pages brought (the list keeps at most this many, or a page, through changes).
    private var loadedRows = 0
    private var hasLoaded = false
    /// The load in flight. A new load cancels it, and `loadGeneration` stops a load that finishes
    /// anyway (cancellation is cooperative) from overwriting newer state.
    private var loadTask: Task<Result<Void, UserError>, Never>?
    private var loadGeneration = 0
    /// The generation of a resync's reload while it is in flight: it shows no indicator, so
    /// the next-page check must not take the list for idle and supersede it with a stale cursor.
    private var quietGeneration: Int?
    /// Changes applied while a load is in flight, oldest first (nil past `replayLimit`). The page
    /// that lands was read before some of them committed: they are applied to it again, or the
    /// page would undo them on screen until the next change to the same rows.
    private var changesDuringLoad: [UserChange]? = []
    static let replayLimit = 10_000

    public init(useCases: UserUseCases, pageSize: Int = FetchUserPageUseCase.defaultPageSize) {
        self.useCases = useCases
        self.pageSize = pageSize
    }

    deinit { loadTask?.cancel() }

    // MARK: intents

    /// Loads the first page once; later appearances keep what is shown (then the load in
    /// flight, if any, is returned). Await the returned task for the load's outcome.
    @discardableResult
    public func onAppear(isolation: isolated (any Actor) = #isolation) -> Load {
        guard !hasLoaded else { return loadTask ?? Self.done }
        hasLoaded = true
        return load(.first, isolation: isolation)
    }

    /// Reloads from the first page (back to the top after `showLastPage`); clears `isStale`.
    @discardableResult
    public func refresh(isolation: isolated (any Actor) = #isolation) -> Load {
        hasLoaded = true
        return load(.first, isolation: isolation)
    }

    /// Replaces the rows with the list's last page (of the active search), read directly rather
    /// than page by page: `hasPrevious` then says rows come before them, and displaying the
    /// first rows loads those. Clears `isStale`.
    @discardableResult
    public func showLastPage(isolation: isolated (any Actor) = #isolation) -> Load {
        hasLoaded = true
        return load(.last, isolation: isolation)
    }

    /// Loads a list restored after a daemon restart as far as it had been read (`window`, at most
    /// `restoredRowLimit` rows, whole pages), with its search: from the first row, or the last
    /// rows when it had been read from the end.
    @discardableResult
    public func restore(_ window: UserListWindow, search text: String?,
                        isolation: isolated (any Actor) = #isolation) -> Load {
        hasLoaded = true
        let pages = (min(max(window.rows, 1), Self.restoredRowLimit) + pageSize - 1) / pageSize
        return load(window.fromEnd ? .last : .first, search: .some(text), limit: pages * pageSize, isolation: isolation)
    }

    /// The most rows a restore reads back (a restart reloads every session's list at once).
    public static let restoredRowLimit = 1_000

    /// Starts a new listing filtered by a name or email substring (`TextKey.matches`); empty text lists everyone.
    @discardableResult
    public func search(_ text: String, isolation: isolated (any Actor) = #isolation) -> Load {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        hasLoaded = true
        return load(.first, search: .some(trimmed.isEmpty ? nil : trimmed), isolation: isolation)
    }

    /// The change feed lost track of changes (`UserChange.resync`): reloads the rows loaded so
    /// far (at least a page, at most a thousand), from the first, with the active search. No
    /// loading indicator: the rows change in place, in one state change, when the reload lands.
    /// A list that has not loaded yet has nothing to reload.
    @discardableResult
    public func resync(isolation: isolated (any Actor) = #isolation) -> Load {
        guard hasLoaded else { return Self.done }
        let window = min(max(pageSize, loadedRows, state.users.count), Self.maximumResyncRows)
        return load(.first, limit: window, showingProgress: false, isolation: isolation)
    }

    /// The most rows a resync reloads (one page request's limit).
    public static let maximumResyncRows = 1_000

    /// The view reports each row it shows; near the end, the next page is fetched, and near
    /// the top of rows that do not start at the first user (`hasPrevious`), the page before
    /// them. Returns the load it started (or the one in flight), or a finished success when
    /// none is needed. Nothing starts while a resync's quiet reload is on its way.
    @discardableResult
    public func didDisplayRow(at index: Int, isolation: isolated (any Actor) = #isolation) -> Load {
        guard state.loading == .none, quietGeneration != loadGeneration else { return loadTask ?? Self.done }
        if state.hasMore, index >= state.users.count - Self.prefetchDistance {
            return load(.next, isolation: isolation)
        }
        if state.hasPrevious, index < Self.prefetchDistance {
            return load(.previous, isolation: isolation)
        }
        return loadTask ?? Self.done
    }

    /// A load the host may await for its outcome: the page shown, or why it is not. A load
    /// superseded by a newer one ends in success (the newer load reports its own outcome).
    public typealias Load = Task<Result<Void, UserError>, Never>

    private static let done = Load { .success(()) }

    /// The data changed elsewhere since the rows were loaded; `refresh` clears it.
    public func markStale() {
        state.isStale = true
    }

    public func didSelectRow(at index: Int) {
        guard state.users.indices.contains(index) else { return }
        onEvent?(.userSelected(id: state.users[index].id))
    }

    /// The selected row's user could not be opened (the store down, the user just removed):
    /// the list says why, since nothing else on screen changes.
    public func selectionFailed(_ error: UserError) {
        state.errorMessage = error.message
    }

    public func dismissError() {
        state.errorMessage = nil
    }

    /// Adds a user. The row appears through the change feed like any other commit; a failure is
    /// shown on the screen and returned.
    public func addUser(_ new: NewUser, isolation: isolated (any Actor) = #isolation) async -> Result<User, UserError> {
        do throws(UserError) {
            return .success(try await useCases.add.execute(new))
        } catch {
            state.errorMessage = error.message
            return .failure(error)
        }
    }

    /// Removes a user; the row goes away through the change feed.
    public func removeUser(id: UUID, isolation: isolated (any Actor) = #isolation) async -> Result<Void, UserError> {
        do throws(UserError) {
            try await useCases.remove.execute(id: id)
            return .success(())
        } catch {
            state.errorMessage = error.message
            return .failure(error)
        }
    }


    /// Whether `index` names a row on screen (hosts use it to reject bad intents clearly).
    public func hasRow(at index: Int) -> Bool { state.users.indices.contains(index) }

    // MARK: live updates

    /// Applies a change committed anywhere (another session, another process) to the rows shown;
    /// `.resync` says nothing about any row and is left to `resync(isolation:)`.
    /// Rows stay in the store's order (name, case-insensitively, then id); a row that sorts past
    /// the loaded rows while more pages exist is left for the page that will bring it.
    ///
    /// Rows and total change together, in one state change. A user not among the loaded rows is
    /// counted in the total only while more pages exist (it may be on one of them); once every
    /// page is loaded, every counted user is on screen.
    ///
    /// `markingStale` (a change made elsewhere) also sets `isStale`, in the same state change.
    ///
    /// Returns what the change did (`UserListStep`), which a list in the very same state may
    /// `replay` instead of computing it again.
    @discardableResult
    public func apply(_ change: UserChange, markingStale: Bool = false) -> UserListStep {
        if loadTask != nil {
            changesDuringLoad?.append(change)
            if (changesDuringLoad?.count ?? 0) > Self.replayLimit { changesDuringLoad = nil }
        }
        let before = current
        var updated = before
        Self.apply(change, to: &updated)
        let capacity = rowCapacity
        let trimmed = trimToLoadedRows(&updated)
        if markingStale { updated.isStale = true }
        state = updated
        // A cut also moved this list's cursor: a list replaying the step takes both.
        let cut = trimmed ? next.map { UserListStep.Cut(capacity: capacity, next: $0) } : nil
        return UserListStep(before: before, markingStale: markingStale, after: updated, cut: cut)
    }

    /// Takes `step`'s outcome if this list is in its `before` state and would reach exactly
    /// that by applying the same change (no load in flight to replay it; a cut at this list's
    /// capacity, or none that this list would make). False, changing nothing, otherwise: then
    /// `apply` the change. The host vouches that `step` was made by the same change.
    /// `notifying` false: the host sends the new state itself, right after (no `onStateChange`).
    public func replay(_ step: UserListStep, notifying: Bool = true) -> Bool {
        guard loadTask == nil, step.before.isIdentical(to: current) else { return false }
        if let cut = step.cut {
            guard cut.capacity == rowCapacity else { return false }
            next = cut.next
        } else if wouldTrim(step.after) {
            return false
        }
        // Told apart by storage, not by comparing every row (most of a fan-out's cost per list
        // once): an outcome in other storage is at worst announced as a change the diff finds empty.
        let changed = !step.after.isIdentical(to: current)
        current = step.after
        if changed && notifying { onStateChange?() }
        return true
    }

    /// Whether the list is in `state` (`UserListState.isIdentical`), asked without copying its
    /// own state out.
    public func isShowing(_ state: UserListState) -> Bool {
        current.isIdentical(to: state)
    }

    /// Whether `trimToLoadedRows` would cut `updated` in this list (its capacity is its own).
    private func wouldTrim(_ updated: UserListState) -> Bool {
        Self.wouldTrim(updated, capacity: rowCapacity)
    }

    static func wouldTrim(_ updated: UserListState, capacity: Int) -> Bool {
        updated.users.count > capacity && updated.loading == .none
    }

    /// How many rows the list keeps through changes: what its pages loaded, at least a page.
    private var rowCapacity: Int { max(pageSize, loadedRows) }

    /// A burst of changes (an import of a million users) must not grow the list past what its
    /// pages loaded: rows beyond that (at least a page) are dropped and become the next page
    /// again, reloaded from the store's cursor after the last row kept. Stores that cannot make
    /// such a cursor keep every row, as before.
    /// Returns whether it cut.
    @discardableResult
    private func trimToLoadedRows(_ updated: inout UserListState) -> Bool {
        let capacity = rowCapacity
        guard wouldTrim(updated) else { return false }
        let kept = updated.users[capacity - 1]
        let total = updated.search == nil ? nil : updated.totalCount
        guard let cursor = useCases.fetchPage.cursor(after: kept, totalCount: total) else {
            return false
        }
        updated.users.removeSubrange(capacity...)
        updated.hasMore = true
        next = cursor
        return true
    }

    // MARK: loading

    /// Which rows a load brings: the first page (replacing the rows), the next or the previous
    /// page (added after or before them), or the last page (replacing them).
    private enum LoadKind {
        case first, next, previous, last

        var replaces: Bool { self == .first || self == .last }
    }

    /// Starts a load. `search`, when given, replaces the active search in the same state change.
    /// The error is cleared and the loading indicator shown in one change, so a host never sees
    /// an in-between "not loading, no error" frame. Without `showingProgress` (a resync) neither
    /// changes until the load lands.
    private func load(_ kind: LoadKind, search newSearch: String?? = .none, limit: Int? = nil,
                      showingProgress: Bool = true,
                      isolation: isolated (any Actor)) -> Load {
        loadTask?.cancel()
        loadGeneration += 1
        let generation = loadGeneration
        let (after, before) = (next, previous)
        var updated = state
        if case .some(let replacement) = newSearch { updated.search = replacement }
        if showingProgress {
            updated.errorMessage = nil  // a retry must not keep showing the last failure (seed 000)
            switch kind {
            case .first, .last: updated.loading = .fullScreen
            case .next: updated.loading = .nextPage
            case .previous: updated.loading = .previousPage
            }
        }
        let search = updated.search
        let limit = limit ?? pageSize
        quietGeneration = showingProgress ? nil : generation
        changesDuringLoad = []
        state = updated
        let task = Load {
            _ = isolation  // run on the owner's actor
            let result: Result<UserPage, UserError>
            do throws(UserError) {
                let fetch = self.useCases.fetchPage
                switch kind {
                case .first: result = .success(try await fetch.execute(after: nil, search: search, limit: limit))
                case .next: result = .success(try await fetch.execute(after: after, search: search, limit: limit))
                case .last: result = .success(try await fetch.execute(before: nil, search: search, limit: limit))
                case .previous: result = .success(try await fetch.execute(before: before, search: search, limit: limit))
                }
            } catch {
                result = .failure(error)
            }
            let current = generation == self.loadGeneration
            self.finishLoad(result, kind, generation: generation)
            return current ? result.map { _ in () } : .success(())
        }
        loadTask = task
        return task
    }

    private func finishLoad(_ result: Result<UserPage, UserError>, _ kind: LoadKind, generation: Int) {
        guard generation == loadGeneration else { return }  // superseded: newer state wins
        quietGeneration = nil
        var updated = state
        updated.loading = .none
        switch result {
        case .success(let page):
            let known = kind.replaces ? [] : Set(updated.users.map(\.id))
            let fresh = page.users.filter { !known.contains($0.id) }
            switch kind {
            case .first, .last: updated.users = page.users
            case .next: updated.users.append(contentsOf: fresh)
            case .previous: updated.users.insert(contentsOf: fresh, at: 0)
            }
            // A page says how the list goes on in its own direction only; the other side stays.
            if kind != .previous {
                next = page.next
                updated.hasMore = page.hasMore
            }
            if kind != .next {
                previous = page.previous
                updated.hasPrevious = page.hasPrevious
            }
            updated.totalCount = page.totalCount
            // Another page does not bring the loaded rows up to date: only a reload clears staleness.
            updated.isStale = kind.replaces ? page.isStale : (updated.isStale || page.isStale)
            if let changes = changesDuringLoad {
                for change in changes { Self.apply(change, to: &updated, replaying: true) }
            } else {
                updated.isStale = true  // too many to replay (an import): the page may be behind
            }
            loadedRows = updated.users.count
        case .failure(let error):
            updated.errorMessage = error.message
        }
        state = updated
        loadTask = nil
        changesDuringLoad = []
    }
}
