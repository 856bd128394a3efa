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
    private var loadTask: Load?
    private var saveTask: Task<Result<User, UserError>, Never>?
    /// True until a load succeeds. A restored screen has a `user` but still needs the stored one.
    private var needsLoad = true

    public var userID: UUID { state.userID }

    public init(userID: UUID, useCases: UserUseCases) {
        self.state = UserDetailState(userID: userID)
        self.useCases = useCases
    }

    /// A screen for a user already fetched (opening a user loads it before the screen exists).
    public init(loaded user: User, useCases: UserUseCases) {
        var state = UserDetailState(userID: user.id)
        state.user = user
        state.draftName = user.name
        self.state = state
        self.useCases = useCases
        self.needsLoad = false
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

    /// A load the host may await for its outcome: the stored user, or why it could not be read.
    public typealias Load = Task<Result<User, UserError>, Never>

    /// Loads the user if not loaded yet (a restored screen reloads too) and returns the load (the
    /// one in flight, or a finished one when nothing needs loading). A restored draft is kept
    /// over the stored name; if someone saved since, its next save is refused with a conflict.
    @discardableResult
    public func onAppear(isolation: isolated (any Actor) = #isolation) -> Load {
        if let loading = loadTask { return loading }
        guard needsLoad else {
            let outcome: Result<User, UserError> = state.user.map { .success($0) } ?? .failure(.notFound(id: state.userID))
            return Load { outcome }
        }
        state.errorMessage = nil
        return read(isolation: isolation) { result in
            switch result {
            case .success(let user):
                self.needsLoad = false
                if self.state.user != nil {
                    self.apply(.saved(user))  // restored: follow it, or keep the draft (and its version)
                } else {
                    var updated = self.state
                    updated.user = user
                    if updated.draftName.isEmpty { updated.draftName = user.name }
                    self.state = updated
                }
            case .failure(let error):
                self.state.errorMessage = error.message
            }
        }
    }

    /// The change feed lost track of changes (`UserChange.resync`): reads the user again and
    /// follows it as it follows a save made elsewhere (`apply`), so a draft is kept, with the
    /// version it was edited from. A user gone meanwhile shows as removed. Returns the read.
    @discardableResult
    public func resync(isolation: isolated (any Actor) = #isolation) -> Load {
        if let loading = loadTask { return loading }  // a load in flight reads the store anyway
        guard !needsLoad else { return onAppear(isolation: isolation) }
        let id = state.userID
        return read(isolation: isolation) { result in
            switch result {
            case .success(let user): self.apply(.saved(user))
            case .failure(.notFound): self.apply(.removed(id: id))
            case .failure(let error): self.state.errorMessage = error.message
            }
        }
    }

    /// Reads the user on the owner's actor, hands the outcome to `finish` there, and is the load
    /// in flight until then (both the first load and a resync read this way).
    private func read(isolation: isolated (any Actor), then finish: @escaping (Result<User, UserError>) -> Void) -> Load {
        let id = state.userID
        let task = Load {
            _ = isolation
            defer { self.loadTask = nil }
            let result: Result<User, UserError>
            do throws(UserError) {
                result = .success(try await self.useCases.fetchUser.execute(id: id))
            } catch {
                result = .failure(error)
            }
            finish(result)
            return result
        }
        loadTask = task
        return task
    }

    public func setDraftName(_ name: String) {
        state.draftName = name
    }

    /// Saves the draft and returns the save's outcome. Success emits `didSave`; a conflict shows
    /// the stored user (`conflict`) and keeps the draft, so a second save deliberately overwrites
    /// what is stored now. A screen still loading saves once loaded; one with nothing to save
    /// succeeds at once with the stored user.
    @discardableResult
    public func save(isolation: isolated (any Actor) = #isolation) -> Task<Result<User, UserError>, Never> {
        if let saving = saveTask { return saving }
        guard let user = state.user else {
            let loading = loadTask
            return Task {
                _ = isolation
                _ = await loading?.value
                guard self.state.user != nil else { return .failure(.notFound(id: self.state.userID)) }
                return await self.save().value
            }
        }
        guard state.canSave else {
            let outcome = Self.refusal(for: state, user: user)
            return Task { outcome }
        }
        let draft = state.draftName
        var saving = state
        saving.errorMessage = nil
        saving.isSaving = true
        state = saving
        let task = Task { () -> Result<User, UserError> in
            _ = isolation
            defer { self.saveTask = nil }
            do throws(UserError) {
                let saved = try await self.useCases.update.rename(user, to: draft)
                var updated = self.state
                updated.user = saved
                // What was typed while saving is newer than what was saved: keep it.
                if updated.draftName == draft { updated.draftName = saved.name }
                updated.conflict = nil
                updated.isSaving = false
                self.state = updated
                self.onEvent?(.didSave(saved))
                return .success(saved)
            } catch {
                var updated = self.state
                updated.isSaving = false
                updated.errorMessage = error.message
                if case .conflict(let stored) = error {
                    updated.user = stored
                    updated.conflict = stored
                }
                self.state = updated
                return .failure(error)
            }
        }
        saveTask = task
        return task
    }

    /// Why a screen that cannot save now does not: nothing to save is a success with the stored
    /// user; otherwise the name rule it breaks.
    private static func refusal(for state: UserDetailState, user: User) -> Result<User, UserError> {
        guard state.isDirty else { return .success(user) }
        do throws(UserError) {
            _ = try UserValidation.validName(state.draftName)
        } catch {
            return .failure(error)
        }
        return .failure(.validation(field: .name, message: "The draft cannot be saved while a save is in flight."))
    }

    /// Waits for the save in flight, if any (shutdown finishes what was acknowledged as started).
    public func finishSaving(isolation: isolated (any Actor) = #isolation) async {
        _ = await saveTask?.value
    }

    /// Clears the error banner and the conflict (the person has seen what is stored now).
    public func dismissError() {
        var updated = state
        updated.errorMessage = nil
        updated.conflict = nil
        state = updated
    }

    // MARK: live updates

    /// A change committed elsewhere. An untouched screen follows it; a screen with a draft keeps
    /// the draft and the version it was edited from, so its next save is refused with a
    /// conflict by the store (`conflict` is set only when this screen tried to save).
    /// `.resync` names no user and is left to `resync(isolation:)`.
    public func apply(_ change: UserChange) {
        guard change.userID == state.userID, let current = state.user else { return }
        switch change {
        case .saved(let stored), .added(let stored):
            guard stored.version > current.version, !state.isSaving else { return }
            guard !state.isDirty else { return }
            var updated = state
            updated.user = stored
            updated.draftName = stored.name
            updated.conflict = nil
            state = updated
        case .removed:
            var updated = state
            updated.user = nil
            updated.errorMessage = "This user was removed."
            state = updated
        case .resync:
            break
        }
    }
}
