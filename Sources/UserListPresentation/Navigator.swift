import Foundation
import UserListDomain

/// A screen on the navigation stack.
public enum Screen {
    case list(UserListViewModel)
    case detail(UserDetailViewModel)
}

/// The whole session's state: the stack of screens, bottom first. Always starts with the list.
public struct NavigationState: Equatable, Codable, Sendable {
    public enum ScreenState: Equatable, Codable, Sendable {
        case list(UserListState)
        case detail(UserDetailState)
    }

    public var screens: [ScreenState]

    public init(screens: [ScreenState]) { self.screens = screens }
}

/// One-shot events from any screen, as the host forwards them to clients.
public enum NavigatorEvent: Equatable, Sendable {
    case list(UserListEvent)
    case detail(UserDetailEvent)
    /// A change committed anywhere that this session applied.
    case changed(UserChange)
}

/// Owns the screen stack (the seed's coordinator): list → detail on `userSelected`, back, and the
/// list brought up to date after `didSave`. It also listens to the change feed for the session,
/// so every screen follows saves made anywhere.
///
/// Belongs to one actor, like the ViewModels it owns.
public final class Navigator {
    public private(set) var screens: [Screen]
    public var onStateChange: (() -> Void)?
    public var onEvent: ((NavigatorEvent) -> Void)?

    private let useCases: UserUseCases
    /// Set by the list's `userSelected` event during `selectRow`, which opens it.
    private var pendingSelection: UUID?
    private var feedTask: Task<Void, Never>?

    public init(useCases: UserUseCases) {
        self.useCases = useCases
        self.screens = []
        screens = [.list(makeList())]
    }

    /// Rebuilds the stack saved by `state` (a daemon restart): drafts are kept, data reloaded.
    public init(restoring saved: NavigationState, useCases: UserUseCases,
                isolation: isolated (any Actor) = #isolation) {
        self.useCases = useCases
        self.screens = []
        var restored: [Screen] = [.list(makeList())]
        for case .detail(let detail) in saved.screens {
            restored.append(.detail(makeDetail(restoring: detail)))
        }
        screens = restored
        if case .list(let savedList) = saved.screens.first, let search = savedList.search {
            list.search(search)
        } else {
            list.onAppear()
        }
        for case .detail(let detail) in screens { detail.onAppear() }
    }

    deinit { feedTask?.cancel() }

    /// The list at the bottom of the stack.
    public var list: UserListViewModel {
        guard case .list(let list) = screens[0] else { preconditionFailure("the stack starts with the list") }
        return list
    }

    /// The detail screen on top, if the top is one.
    public var topDetail: UserDetailViewModel? {
        guard case .detail(let detail) = screens.last else { return nil }
        return detail
    }

    public var state: NavigationState {
        NavigationState(screens: screens.map { screen in
            switch screen {
            case .list(let list): .list(list.state)
            case .detail(let detail): .detail(detail.state)
            }
        })
    }

    // MARK: navigation

    /// Opens the detail screen for `id` on top of the stack.
    public func openUser(_ id: UUID, isolation: isolated (any Actor) = #isolation) {
        let detail = makeDetail(id: id)
        screens.append(.detail(detail))
        onStateChange?()
        detail.onAppear()
    }

    /// Selects a row of the list; the list's `userSelected` event opens that user's detail screen.
    public func selectRow(at index: Int, isolation: isolated (any Actor) = #isolation) {
        pendingSelection = nil  // a selection the host made on the list itself is not ours to open
        list.didSelectRow(at: index)
        guard let id = pendingSelection else { return }
        pendingSelection = nil
        openUser(id, isolation: isolation)
    }

    /// Pops the top screen; the list itself is never popped. Returns whether anything was popped.
    @discardableResult
    public func back() -> Bool {
        guard screens.count > 1 else { return false }
        screens.removeLast()
        onStateChange?()
        return true
    }

    // MARK: live updates

    /// Subscribes the session's screens to `feed`. Call once; changes arrive on the owner's actor.
    public func follow(_ feed: any UserChangeFeed, isolation: isolated (any Actor) = #isolation) {
        feedTask?.cancel()
        let changes = feed.subscribe()
        feedTask = Task { [weak self] in
            _ = isolation
            for await change in changes {
                guard let self else { return }
                self.apply(change)
            }
        }
    }

    /// Applies a committed change to every screen.
    public func apply(_ change: UserChange) {
        for screen in screens {
            switch screen {
            case .list(let list): list.apply(change)
            case .detail(let detail): detail.apply(change)
            }
        }
        onEvent?(.changed(change))
    }

    // MARK: wiring

    private func makeList() -> UserListViewModel {
        let list = UserListViewModel(useCases: useCases)
        list.onStateChange = { [weak self] in self?.onStateChange?() }
        list.onEvent = { [weak self] event in
            guard let self else { return }
            self.onEvent?(.list(event))
            if case .userSelected(let id) = event { self.pendingSelection = id }
        }
        return list
    }

    private func makeDetail(id: UUID) -> UserDetailViewModel {
        wire(UserDetailViewModel(userID: id, useCases: useCases))
    }

    private func makeDetail(restoring state: UserDetailState) -> UserDetailViewModel {
        wire(UserDetailViewModel(restoring: state, useCases: useCases))
    }

    private func wire(_ detail: UserDetailViewModel) -> UserDetailViewModel {
        detail.onStateChange = { [weak self] in self?.onStateChange?() }
        detail.onEvent = { [weak self] event in
            guard let self else { return }
            self.onEvent?(.detail(event))
            if case .didSave(let user) = event { self.list.apply(.saved(user)) }
        }
        return detail
    }
}
