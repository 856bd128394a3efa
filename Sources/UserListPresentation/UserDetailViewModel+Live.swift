import Foundation
import UserListDomain

/// Live updates: others' saves and removals reach the open screen, merged into its draft.
extension UserDetailViewModel {
    /// A change committed elsewhere. An untouched screen follows it. A screen with a draft merges
    /// it (`UserMerge`, base: the stored user the draft is based on): fields only they changed
    /// follow theirs and are marked (`followed`), fields both changed differently become
    /// `conflicts`, and the draft is now based on their version, so a save writes only this
    /// person's fields over it. A removal keeps the draft and says who removed the user.
    /// `.resync` names no user and is left to `resync(isolation:)`. `author`: who made the change
    /// when the host knows (its own one-shot writes); otherwise it is read from the history.
    public func apply(_ change: UserChange, author: String? = nil, isolation: isolated (any Actor) = #isolation) {
        guard change.userID == state.userID else { return }
        switch change {
        case .saved(let stored), .added(let stored):
            if !state.isNew, let removed = state.removal?.base {
                merge(stored, over: removed, author: author, isolation: isolation)
                return
            }
            if state.isNew || state.removal != nil {
                // The user exists (again): someone created this very id while this screen was
                // creating it. The draft stays, now a draft of that user: its differences are the
                // person's to save or drop.
                var updated = state
                updated.settle(on: stored)
                updated.errorMessage = nil
                state = updated
                return
            }
            guard let current = state.user, stored.version > current.version else { return }
            guard !isSaveInFlight else {
                if stored.version > (arrivedWhileSaving?.version ?? 0) { arrivedWhileSaving = stored }
                return
            }
            merge(stored, author: author, isolation: isolation)
        case .removed:
            guard state.user != nil, !state.isNew else { return }
            var updated = state
            updated.user = nil
            updated.conflicts.removeAll()
            updated.followed.removeAll()
            updated.removal = Removal(author: author, base: state.user)
            updated.errorMessage = "This user was removed."
            state = updated
            lookUpAuthors(isolation: isolation)
        case .resync:
            break
        }
    }

    /// Merges `stored` (someone else's save) into the draft, and makes it the draft's base.
    /// `removed`: the user was removed and `stored` creates it again; the draft was based on
    /// `removed`.
    func merge(_ stored: User, over removed: User? = nil, author: String? = nil,
               isolation: isolated (any Actor) = #isolation) {
        guard let base = removed ?? state.user else { return }
        var updated = state
        if removed != nil {
            updated.removal = nil
            updated.errorMessage = nil
        }
        let theirs = UserFields(stored)
        let merge = UserMerge(base: UserFields(base), mine: updated.draft, theirs: theirs)
        updated.user = stored
        updated.draft = merge.merged
        // Earlier conflicts stand while theirs still differs from mine (their value may be newer).
        var conflicts = updated.conflicts.compactMap { conflict -> FieldConflict? in
            guard theirs[conflict.field] != merge.merged[conflict.field] else { return nil }
            guard theirs[conflict.field] != conflict.theirs else { return conflict }
            return FieldConflict(field: conflict.field, theirs: theirs[conflict.field], author: author,
                                 version: stored.version)
        }
        for field in merge.conflicts where !conflicts.contains(where: { $0.field == field }) {
            conflicts.append(FieldConflict(field: field, theirs: theirs[field], author: author,
                                           version: stored.version))
        }
        updated.conflicts = conflicts.sorted { $0.field.order < $1.field.order }
        if updated.isDirty || !updated.conflicts.isEmpty {
            var followed = updated.followed.filter { !merge.followed.contains($0.field) }
            followed += merge.followed.map { FollowedChange(field: $0, author: author, version: stored.version) }
            updated.followed = followed.sorted { $0.field.order < $1.field.order }
        } else {
            updated.followed.removeAll()  // an untouched screen simply shows what is stored
        }
        state = updated
        lookUpAuthors(isolation: isolation)
    }

    /// Settles a conflict on `field` with this person's value; false when there is none.
    @discardableResult
    public func keepMine(_ field: UserField) -> Bool {
        guard !state.isReadOnly, let index = state.conflicts.firstIndex(where: { $0.field == field }) else {
            return false
        }
        state.conflicts.remove(at: index)
        return true
    }

    /// Settles a conflict on `field` with the saved value; false when there is none.
    @discardableResult
    public func takeTheirs(_ field: UserField) -> Bool {
        guard !state.isReadOnly, let index = state.conflicts.firstIndex(where: { $0.field == field }) else {
            return false
        }
        var updated = state
        let conflict = updated.conflicts.remove(at: index)
        var draft = updated.draft
        draft[field] = conflict.theirs
        updated.draft = draft
        state = updated
        return true
    }

    /// The user was removed while this screen held a draft: makes the draft a new user's, to be
    /// created again (with the same id) by the next save; false when the user was not removed.
    @discardableResult
    public func recreate() -> Bool {
        guard !state.isReadOnly, state.removal != nil else { return false }
        var updated = state
        updated.removal = nil
        updated.isNew = true
        updated.errorMessage = nil
        state = updated
        return true
    }

    func mergeWhatArrivedWhileSaving(isolation: isolated (any Actor) = #isolation) {
        guard let arrived = arrivedWhileSaving else { return }
        arrivedWhileSaving = nil
        apply(.saved(arrived), isolation: isolation)
    }

    // MARK: who changed it

    /// Fills in who made the changes the screen shows without an author (conflicts, followed
    /// fields, a removal), from the history, when the store keeps one. Until then the screen
    /// says "someone".
    func lookUpAuthors(isolation: isolated (any Actor) = #isolation) {
        guard let history = useCases.history else { return }
        let needsAuthor = state.conflicts.contains { $0.author == nil } || state.followed.contains { $0.author == nil }
            || (state.removal != nil && state.removal?.author == nil)
        guard needsAuthor else { return }
        let id = state.userID
        let previous = authorLookup
        lookupsStarted += 1
        let number = lookupsStarted
        authorLookup = Task {
            _ = isolation
            await previous?.value
            if let page = try? await history.user(id, limit: 20) { self.fillAuthors(from: page.entries) }
            if self.lookupsStarted == number { self.authorLookup = nil }  // the last one: none in flight
        }
    }

    private func fillAuthors(from entries: [HistoryEntry]) {
        func author(version: Int) -> String? {
            entries.first { $0.versionAfter == version }.map { $0.author.personName }
        }
        var updated = state
        for index in updated.conflicts.indices where updated.conflicts[index].author == nil {
            updated.conflicts[index].author = author(version: updated.conflicts[index].version)
        }
        for index in updated.followed.indices where updated.followed[index].author == nil {
            updated.followed[index].author = author(version: updated.followed[index].version)
        }
        if updated.removal != nil, updated.removal?.author == nil {
            updated.removal?.author = entries.first { $0.kind == .removed }?.author.personName
        }
        state = updated
    }
}

