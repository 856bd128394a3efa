import Foundation
import UserListDomain

/// The user detail and edit screen (seed 001's `UserDetailViewModel`), without Combine.
///
/// Owned by one actor like `UserListViewModel`. The draft survives failures and conflicts: a
/// person never loses what they typed because someone else saved first.
public final class UserDetailViewModel {
    public private(set) var state: UserDetailState {
        didSet { if state != oldValue { onStateChange?() } }
    }
    public var onStateChange: (() -> Void)?
    public var onEvent: ((UserDetailEvent) -> Void)?

    private let useCases: UserUseCases
    private var loadTask: Task<Void, Never>?
    private var saveTask: Task<Void, Never>?
    /// True until a load succeeds. A restored screen has a `user` but still needs the stored one.
    private var needsLoad = true

    /// How the last save ended, for hosts that answer a request only once it is known.
    public private(set) var lastSaveOutcome: Result<User, UserError>?

    public var userID: UUID { state.userID }

    public init(userID: UUID, useCases: UserUseCases) {
        self.state = UserDetailState(userID: userID)
        self.useCases = useCases
    }

    /// Rebuilds a screen from a saved state (a daemon restart): the draft is kept, the user reloaded.
    public init(restoring saved: UserDetailState, useCases: UserUseCases) {
        var state = saved
        state.isSaving = false
        self.state = state
        self.useCases = useCases
    }

    deinit {
        loadTask?.cancel()
        saveTask?.cancel()
    }

    // MARK: intents

    /// Loads the user if not loaded yet (a restored screen reloads too). A restored draft is kept
    /// over the stored name; if someone saved since, that shows as a conflict.
    public func onAppear(isolation: isolated (any Actor) = #isolation) {
        guard needsLoad, loadTask == nil else { return }
        state.errorMessage = nil
        let id = state.userID
        loadTask = Task {
            _ = isolation
            do throws(UserError) {
                let user = try await self.useCases.fetchUser.execute(id: id)
                self.needsLoad = false
                if self.state.user != nil {
                    self.apply(.saved(user))  // restored: follow it, or keep the draft and show a conflict
                } else {
                    var updated = self.state
                    updated.user = user
                    if updated.draftName.isEmpty { updated.draftName = user.name }
                    self.state = updated
                }
            } catch {
                self.state.errorMessage = error.message
            }
            self.loadTask = nil
        }
    }

    public func setDraftName(_ name: String) {
        state.draftName = name
    }

    /// Saves the draft. Success emits `didSave`; a conflict shows the stored user and keeps the
    /// draft, so a second save deliberately overwrites what is stored now.
    public func save(isolation: isolated (any Actor) = #isolation) {
        guard state.canSave, let user = state.user else { return }
        let draft = state.draftName
        var saving = state
        saving.errorMessage = nil
        saving.isSaving = true
        lastSaveOutcome = nil
        state = saving
        saveTask = Task {
            _ = isolation
            do throws(UserError) {
                let saved = try await self.useCases.update.rename(user, to: draft)
                var updated = self.state
                updated.user = saved
                // What was typed while saving is newer than what was saved: keep it.
                if updated.draftName == draft { updated.draftName = saved.name }
                updated.conflict = nil
                updated.isSaving = false
                self.state = updated
                self.lastSaveOutcome = .success(saved)
                self.onEvent?(.didSave(saved))
            } catch {
                var updated = self.state
                updated.isSaving = false
                updated.errorMessage = error.message
                if case .conflict(let stored) = error {
                    updated.user = stored
                    updated.conflict = stored
                }
                self.state = updated
                self.lastSaveOutcome = .failure(error)
            }
            self.saveTask = nil
        }
    }

    /// Waits for the save in flight, if any, and returns how the last save ended.
    public func waitForSave(isolation: isolated (any Actor) = #isolation) async -> Result<User, UserError>? {
        await saveTask?.value
        return lastSaveOutcome
    }

    /// Waits for the load in flight, if any.
    public func waitForLoad(isolation: isolated (any Actor) = #isolation) async {
        await loadTask?.value
    }

    public func dismissError() {
        state.errorMessage = nil
    }

    // MARK: live updates

    /// A change committed elsewhere. An untouched screen follows it; a screen with a draft keeps
    /// the draft and shows what is stored now as a conflict.
    public func apply(_ change: UserChange) {
        guard change.userID == state.userID, let current = state.user else { return }
        switch change {
        case .saved(let stored), .added(let stored):
            guard stored.version > current.version, !state.isSaving else { return }
            var updated = state
            if state.isDirty {
                updated.conflict = stored
            } else {
                updated.user = stored
                updated.draftName = stored.name
                updated.conflict = nil
            }
            state = updated
        case .removed:
            var updated = state
            updated.user = nil
            updated.errorMessage = "This user was removed."
            state = updated
        }
    }
}
