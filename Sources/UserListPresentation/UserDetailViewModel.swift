import Foundation
import UserListDomain

/// The user detail and edit screen (seed 001's `UserDetailViewModel`), without Combine, with a
/// draft per field (the seed's `draftName`, generalised to the email and the avatar URL).
///
/// Owned by one actor like `UserListViewModel`. The draft survives failures and conflicts, and
/// follows others' saves field by field (`UserDetailViewModel+Live.swift`): a person never
/// loses what they typed, and never overwrites what someone else saved without seeing it.
public final class UserDetailViewModel {
    public internal(set) var state: UserDetailState {
        didSet { if state != oldValue { onStateChange?() } }
    }
    public var onStateChange: (() -> Void)?
    public var onEvent: ((UserDetailEvent) -> Void)?

    /// Replaced when the session's client is renamed (`Navigator.reauthor`).
    var useCases: UserUseCases
    private var loadTask: Load?
    private var saveTask: Task<Result<User, UserError>, Never>?
    /// True until a load succeeds. A restored screen has a `user` but still needs the stored one.
    private var needsLoad = true
    /// The newest save by someone else that arrived while this screen's own save was in flight:
    /// merged once the save has finished (the save's outcome decides what it is merged into).
    var arrivedWhileSaving: User?
    /// The history read naming who made the changes on screen, while in flight: a save waits for
    /// it, so its reply (a refusal that names them, say) shows who.
    var authorLookup: Task<Void, Never>?
    var lookupsStarted = 0

    public var userID: UUID { state.userID }

    public init(userID: UUID, useCases: UserUseCases) {
        self.state = UserDetailState(userID: userID)
        self.useCases = useCases
    }

    /// A screen for a user already fetched (opening a user loads it before the screen exists).
    public init(loaded user: User, useCases: UserUseCases) {
        var state = UserDetailState(userID: user.id)
        state.user = user
        state.draft = UserFields(user)
        self.state = state
        self.useCases = useCases
        self.needsLoad = false
    }

    /// An empty screen whose save creates a user with `newUserID` (the TUI's `a`).
    public init(newUserID: UUID, useCases: UserUseCases) {
        var state = UserDetailState(userID: newUserID)
        state.isNew = true
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
        self.needsLoad = !saved.isNew
    }

    deinit {
        loadTask?.cancel()
        saveTask?.cancel()
        authorLookup?.cancel()
    }

    // MARK: loading

    /// A load the host may await for its outcome: the stored user, or why it could not be read.
    public typealias Load = Task<Result<User, UserError>, Never>

    /// Loads the user if not loaded yet (a restored screen reloads too) and returns the load (the
    /// one in flight, or a finished one when nothing needs loading). A restored draft is merged
    /// with what was saved meanwhile, as a live save would be.
    @discardableResult
    public func onAppear(isolation: isolated (any Actor) = #isolation) -> Load {
        if let loading = loadTask { return loading }
        guard needsLoad else {
            let outcome: Result<User, UserError> = state.user.map { .success($0) }
                ?? .failure(.notFound(id: state.userID))
            return Load { outcome }
        }
        state.errorMessage = nil
        return read(isolation: isolation, then: .firstLoad)
    }

    private func finishFirstLoad(_ result: Result<User, UserError>, isolation: isolated any Actor) {
        switch result {
        case .success(let user):
            needsLoad = false
            if state.user != nil {
                apply(.saved(user), isolation: isolation)  // restored: follow it, merging the draft
            } else {
                var updated = state
                updated.user = user
                // Fields a restored draft left empty start from the stored user.
                var draft = updated.draft
                let stored = UserFields(user)
                for field in UserField.allCases where draft[field].isEmpty { draft[field] = stored[field] }
                updated.draft = draft
                state = updated
            }
        case .failure(let error):
            state.errorMessage = error.message
        }
    }

    /// The change feed lost track of changes (`UserChange.resync`): reads the user again and
    /// follows it as it follows a save made elsewhere (`apply`). A user gone meanwhile shows as
    /// removed. Returns the read.
    @discardableResult
    public func resync(isolation: isolated (any Actor) = #isolation) -> Load {
        if let loading = loadTask { return loading }  // a load in flight reads the store anyway
        guard !needsLoad else { return onAppear(isolation: isolation) }
        if state.isNew {
            let outcome: Result<User, UserError> = .failure(.notFound(id: state.userID))
            return Load { outcome }
        }
        return read(isolation: isolation, then: .resync)
    }

    private func finishResync(_ result: Result<User, UserError>, isolation: isolated any Actor) {
        switch result {
        case .success(let user): apply(.saved(user), isolation: isolation)
        case .failure(.notFound): apply(.removed(id: state.userID), isolation: isolation)
        case .failure(let error): state.errorMessage = error.message
        }
    }

    private enum AfterRead { case firstLoad, resync }

    /// Reads the user on the owner's actor, finishes there (`after`), and is the load
    /// in flight until then (both the first load and a resync read this way).
    private func read(isolation: isolated (any Actor),
                      then after: AfterRead) -> Load {
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
            switch after {
            case .firstLoad: self.finishFirstLoad(result, isolation: isolation)
            case .resync: self.finishResync(result, isolation: isolation)
            }
            return result
        }
        loadTask = task
        return task
    }

    // MARK: editing

    /// Types into one field. Refused (false) on a read-only screen, which takes no edits.
    @discardableResult
    public func setDraft(_ field: UserField, _ text: String) -> Bool {
        guard !state.isReadOnly else { return false }
        guard state.draft[field] != text else { return true }  // a client re-sending what it has
        var updated = state
        var draft = updated.draft
        draft[field] = text
        updated.draft = draft
        updated.followed.removeAll()  // "alice changed the email just now" lasts until one types
        state = updated
        return true
    }

    @discardableResult
    public func setDraftName(_ name: String) -> Bool { setDraft(.name, name) }

    /// Whether this session may change users; a read-only screen says so and takes no edits.
    public func setReadOnly(_ readOnly: Bool) {
        state.isReadOnly = readOnly
    }

    /// Clears the error banner (the person has read it).
    public func dismissError() {
        state.errorMessage = nil
    }

    // MARK: saving

    /// Saves the changed fields and returns the save's outcome. Only the fields this draft
    /// changed are written, over the newest stored version this screen has seen; a save that
    /// loses the version race merges what was stored (as a live save would be) and is not
    /// retried, so the person sees the other change before a second save. A new user's screen
    /// adds the user. A screen still loading saves once loaded; one with nothing to save
    /// succeeds at once with the stored user.
    @discardableResult
    public func save(isolation: isolated (any Actor) = #isolation) -> Task<Result<User, UserError>, Never> {
        if let saving = saveTask { return saving }
        if let lookup = authorLookup {
            return Task {
                _ = isolation
                await lookup.value
                return await self.save().value
            }
        }
        if state.user == nil && !state.isNew && state.removal == nil {
            let loading = loadTask
            return Task {
                _ = isolation
                _ = await loading?.value
                guard self.state.user != nil else { return .failure(.notFound(id: self.state.userID)) }
                return await self.save().value
            }
        }
        guard state.canSave else {
            let outcome = Self.refusal(for: state)
            return Task { outcome }
        }
        let draft = state.draft, dirty = state.dirtyFields, base = state.user, creating = state.isNew
        var saving = state
        saving.errorMessage = nil
        saving.isSaving = true
        state = saving
        let task = Task { () -> Result<User, UserError> in
            _ = isolation
            defer { self.saveTask = nil }
            do throws(UserError) {
                let saved: User
                if creating || base == nil {
                    let new = NewUser(id: self.state.userID, name: draft.name, email: draft.email,
                                      avatarURL: draft.avatarURL)
                    saved = try await self.useCases.add.execute(new)
                } else {
                    saved = try await self.useCases.update.execute(Self.edit(base!, with: draft, fields: dirty))
                }
                self.finishSave(saved, draft: draft, isolation: isolation)
                return .success(saved)
            } catch {
                self.failSave(error, isolation: isolation)
                return .failure(error)
            }
        }
        saveTask = task
        return task
    }

    /// `user` with `fields` taken from `draft`: what a save writes (the rest stays as stored).
    static func edit(_ user: User, with draft: UserFields, fields: [UserField]) -> User {
        var stored = UserFields(user)
        for field in fields { stored[field] = draft[field] }
        var edited = user
        edited.name = stored.name
        edited.email = stored.email
        edited.avatarURL = stored.avatarURL
        return edited
    }

    private func finishSave(_ saved: User, draft: UserFields, isolation: isolated any Actor) {
        var updated = state
        updated.settle(on: saved)
        updated.isSaving = false
        // What was typed while saving is newer than what was saved: keep it, field by field.
        var shown = updated.draft
        let stored = UserFields(saved)
        for field in UserField.allCases where shown[field] == draft[field] { shown[field] = stored[field] }
        updated.draft = shown
        state = updated
        onEvent?(.didSave(saved))
        mergeWhatArrivedWhileSaving(isolation: isolation)
    }

    private func failSave(_ error: UserError, isolation: isolated any Actor) {
        var updated = state
        updated.isSaving = false
        switch error {
        case .conflict(let stored):
            state = updated
            merge(stored, isolation: isolation)
            state.errorMessage = "Someone else saved this user first: their changes are on screen now. "
                + (state.conflicts.isEmpty
                    ? "Save again to write yours." : "Choose between yours and theirs, then save.")
        case .notFound where !updated.isNew:
            state = updated
            apply(.removed(id: updated.userID), isolation: isolation)
        default:
            updated.errorMessage = error.message
            state = updated
        }
        mergeWhatArrivedWhileSaving(isolation: isolation)
    }

    /// Why a screen that cannot save now does not: nothing to save is a success with the stored
    /// user; otherwise the first rule it breaks.
    private static func refusal(for state: UserDetailState) -> Result<User, UserError> {
        if state.isReadOnly {
            return .failure(.forbidden(
                reason: "This screen is read-only: saving needs root or membership of the admin group."))
        }
        if let conflict = state.conflicts.first {
            let who = conflict.author ?? "someone else"
            return .failure(.validation(field: conflict.field, message: "Choose between your \(conflict.field.label) "
                + "and the one \(who) saved (keep mine or take theirs) before saving."))
        }
        if let user = state.user, !state.isDirty { return .success(user) }
        if let (field, message) = state.fieldErrors.min(by: { $0.key.order < $1.key.order }) {
            return .failure(.validation(field: field, message: message))
        }
        if state.removal != nil {
            return .failure(.notFound(id: state.userID))
        }
        return .failure(.validation(field: .name, message: "The draft cannot be saved while a save is in flight."))
    }

    /// Waits for the save in flight, if any (shutdown finishes what was acknowledged as started).
    public func finishSaving(isolation: isolated (any Actor) = #isolation) async {
        _ = await saveTask?.value
    }

    var isSaveInFlight: Bool { saveTask != nil }
}

extension UserField {
    /// The field's place on the screen (name, email, avatar URL).
    var order: Int { UserField.allCases.firstIndex(of: self) ?? 0 }
}
