import Foundation
import UserListDomain

/// A screen on the navigation stack.
public enum Screen {
    case list(UserListViewModel)
    case detail(UserDetailViewModel)
    /// A user's history, pushed from that user's detail screen.
    case history(UserHistoryViewModel)
}

/// The whole session's state: the stack of screens, bottom first. Always starts with the list.
public struct NavigationState: Equatable, Codable, Sendable {
    public enum ScreenState: Equatable, Codable, Sendable {
        case list(UserListState)
        case detail(UserDetailState)
        case history(UserHistoryState)
    }

    public var screens: [ScreenState]

    public init(screens: [ScreenState]) { self.screens = screens }
}

/// One-shot events from any screen, as the host forwards them to clients.
public enum NavigatorEvent: Equatable, Sendable {
    case list(UserListEvent)
    case detail(UserDetailEvent)
    case history(UserHistoryEvent)
    /// A change committed anywhere that this session applied.
    case changed(UserChange)
}

/// Owns the screen stack (the seed's coordinator): list → detail on `userSelected`, back, and the
/// list brought up to date after `didSave`. The stack is the list and at most one detail screen.
/// Its host hands it every committed change (`apply`), so every screen follows saves made anywhere.
///
/// Belongs to one actor, like the ViewModels it owns.
public final class Navigator {
    public private(set) var screens: [Screen]
    public var onStateChange: (() -> Void)? {
        get { callbacks.onStateChange }
        set { callbacks.onStateChange = newValue }
    }
    public var onEvent: ((NavigatorEvent) -> Void)? {
        get { callbacks.onEvent }
        set { callbacks.onEvent = newValue }
    }
    /// What the screens call (see `NavigatorCallbacks`).
    private let callbacks = NavigatorCallbacks()

    private var useCases: UserUseCases
    /// Set by the list's `userSelected` event during `selectRow`, which opens it.
    private var pendingSelection: UUID?

    public init(useCases: UserUseCases) {
        self.useCases = useCases
        list = Self.makeList(useCases: useCases, callbacks: callbacks)
        screens = [.list(list)]
        reactToScreens()
    }

    deinit { callbacks.clear() }

    /// The navigator's own part in its screens' events. Unowned: the box is emptied when the
    /// navigator ends (`deinit`), before any screen could call it.
    private func reactToScreens() {
        callbacks.selected = { [unowned self] id in pendingSelection = id }
        callbacks.saved = { [unowned self] user in list.apply(.saved(user)) }
    }

    /// Rebuilds the stack saved by `state` (a daemon restart): drafts are kept, data reloaded,
    /// the list as far as it had been read (`listWindow`; its first page without one).
    public init(restoring saved: NavigationState, listWindow: UserListWindow? = nil, useCases: UserUseCases,
                isolation: isolated (any Actor) = #isolation) {
        self.useCases = useCases
        list = Self.makeList(useCases: useCases, callbacks: callbacks)
        self.screens = []
        var restored: [Screen] = [.list(list)]
        // Version 1 holds at most one detail screen: a saved stack with more keeps the top one.
        if let detail = saved.screens.reversed().lazy.compactMap({ screen -> UserDetailState? in
            if case .detail(let detail) = screen { detail } else { nil }
        }).first {
            restored.append(.detail(makeDetail(restoring: detail)))
        }
        screens = restored
        reactToScreens()
        let search: String? = if case .list(let savedList) = saved.screens.first { savedList.search } else { nil }
        if let listWindow {
            list.restore(listWindow, search: search)
        } else if let search {
            list.search(search)
        } else {
            list.onAppear()
        }
        for case .detail(let detail) in screens { detail.onAppear() }
    }


    /// The list at the bottom of the stack (`screens[0]`, never popped), kept apart too: every
    /// change a session follows reads it.
    public let list: UserListViewModel

    /// The detail screen on top, if the top is one.
    public var topDetail: UserDetailViewModel? {
        guard case .detail(let detail) = screens.last else { return nil }
        return detail
    }

    /// The history screen on top, if the top is one.
    public var topHistory: UserHistoryViewModel? {
        guard case .history(let history) = screens.last else { return nil }
        return history
    }

    public var state: NavigationState {
        NavigationState(screens: screens.map { screen in
            switch screen {
            case .list(let list): .list(list.state)
            case .detail(let detail): .detail(detail.state)
            case .history(let history): .history(history.state)
            }
        })
    }

    // MARK: navigation

    /// Opens the detail screen for `id`, already loaded: the user is fetched first, so a
    /// failure (an unknown id) leaves the stack as it was. An open detail screen is replaced (the
    /// stack holds the list and at most one detail screen, and screen ids are unique).
    @discardableResult
    public func openUser(_ id: UUID, isolation: isolated (any Actor) = #isolation) async -> Result<User, UserError> {
        let user: User
        do throws(UserError) {
            user = try await useCases.fetchUser.execute(id: id)
        } catch {
            return .failure(error)
        }
        let detail = wire(UserDetailViewModel(loaded: user, useCases: useCases))
        if case .history = screens.last { screens.removeLast() }  // the history belonged to the detail below
        if case .detail = screens.last {
            screens[screens.count - 1] = .detail(detail)
        } else {
            screens.append(.detail(detail))
        }
        onStateChange?()
        return .success(user)
    }

    /// Opens an empty user screen whose save creates the user (the TUI's `a`), in place of an
    /// open detail screen, as `openUser` does.
    public func openNewUser(id: UUID = UUID()) {
        let detail = wire(UserDetailViewModel(newUserID: id, useCases: useCases))
        if case .history = screens.last { screens.removeLast() }
        if case .detail = screens.last {
            screens[screens.count - 1] = .detail(detail)
        } else {
            screens.append(.detail(detail))
        }
        onStateChange?()
    }

    /// Whether this session may change users: its detail screens say "read-only" and take no
    /// edits. The host sets it from its access policy (which a reload may change).
    public var isReadOnly = false {
        didSet {
            guard isReadOnly != oldValue else { return }
            for case .detail(let detail) in screens { detail.setReadOnly(isReadOnly) }
        }
    }

    /// Selects a row of the list; the list's `userSelected` event opens that user's detail
    /// screen, or the list shows why it could not. Returns nil when `index` names no row
    /// (nothing happens then).
    @discardableResult
    public func selectRow(at index: Int,
                          isolation: isolated (any Actor) = #isolation) async -> Result<User, UserError>? {
        pendingSelection = nil  // a selection the host made on the list itself is not ours to open
        list.didSelectRow(at: index)
        guard let id = pendingSelection else { return nil }
        pendingSelection = nil
        let opened = await openUser(id, isolation: isolation)
        if case .failure(let error) = opened { list.selectionFailed(error) }
        return opened
    }

    /// Pushes the history of the user whose detail screen is on top, and starts reading it.
    /// Returns the first page's read, or nil when no detail screen is on top (nothing happens).
    @discardableResult
    public func openHistory(isolation: isolated (any Actor) = #isolation) -> UserHistoryViewModel.Load? {
        guard let detail = topDetail else { return nil }
        let history = UserHistoryViewModel(userID: detail.userID, useCases: useCases)
        history.onStateChange = { [callbacks] in callbacks.onStateChange?() }
        history.onEvent = { [callbacks] event in callbacks.onEvent?(.history(event)) }
        screens.append(.history(history))
        onStateChange?()
        return history.onAppear(isolation: isolation)
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

    /// Applies a committed change to every screen. A change made elsewhere (`madeHere` false)
    /// also marks the list stale and is announced as `changed`; a change this session made is
    /// only applied (its own screens already show it, and its client asked for it). A
    /// `.resync` makes every screen read what it shows again (`resync`), and is not announced.
    ///
    /// `replaying`: what this change did to another list, which the list takes if it was in
    /// the same state (`UserListViewModel.replay`). Returns the step the list computed itself
    /// (nil when it replayed, or for a resync), for the host to offer the next list.
    /// `announcing` false: the host announces the change and sends the new state itself, right
    /// after (a daemon has its event encoded once, and flushes every session after a change).
    @discardableResult
    public func apply(_ change: UserChange, madeHere: Bool = false, replaying known: UserListStep? = nil,
                      announcing: Bool = true,
                      isolation: isolated (any Actor) = #isolation) -> UserListStep? {
        if case .resync = change {
            resync(isolation: isolation)
            return nil
        }
        var computed: UserListStep?
        for screen in screens {
            switch screen {
            case .list(let list):
                if let known, list.replay(known, notifying: announcing) { continue }
                computed = list.apply(change, markingStale: !madeHere)
            // A change this session made is its own person's: named at once, not read back.
            case .detail(let detail): detail.apply(change, author: madeHere ? useCases.author?.personName : nil,
                                                   isolation: isolation)
            case .history(let history): history.apply(change, isolation: isolation)
            }
        }
        if !madeHere && announcing { onEvent?(.changed(change)) }
        return computed
    }

    /// The change feed lost track of changes: the list reloads the rows it has loaded and the
    /// detail screen reads its user again, keeping a draft. Each screen's new state goes out
    /// as its ordinary state change.
    public func resync(isolation: isolated (any Actor) = #isolation) {
        for screen in screens {
            switch screen {
            case .list(let list): list.resync(isolation: isolation)
            case .detail(let detail): detail.resync(isolation: isolation)
            case .history(let history): history.refresh(isolation: isolation)
            }
        }
    }

    /// Its screens' writes from now on recorded as `useCases`' author (its host's client
    /// reattached under another name); a write already under way keeps the author it started with.
    public func reauthor(_ useCases: UserUseCases) {
        self.useCases = useCases
        for screen in screens {
            switch screen {
            case .list(let list): list.useCases = useCases
            case .detail(let detail): detail.useCases = useCases
            case .history(let history): history.useCases = useCases
            }
        }
    }

    // MARK: wiring

    private static func makeList(useCases: UserUseCases, callbacks: NavigatorCallbacks) -> UserListViewModel {
        let list = UserListViewModel(useCases: useCases)
        list.onStateChange = { [callbacks] in callbacks.onStateChange?() }
        list.onEvent = { [callbacks] event in
            callbacks.onEvent?(.list(event))
            if case .userSelected(let id) = event { callbacks.selected?(id) }
        }
        return list
    }

    private func makeDetail(restoring state: UserDetailState) -> UserDetailViewModel {
        wire(UserDetailViewModel(restoring: state, useCases: useCases))
    }

    private func wire(_ detail: UserDetailViewModel) -> UserDetailViewModel {
        detail.setReadOnly(isReadOnly)
        detail.onStateChange = { [callbacks] in callbacks.onStateChange?() }
        detail.onEvent = { [callbacks] event in
            callbacks.onEvent?(.detail(event))
            if case .didSave(let user) = event { callbacks.saved?(user) }
        }
        return detail
    }
}
