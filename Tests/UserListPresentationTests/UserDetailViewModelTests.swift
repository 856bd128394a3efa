import Foundation
import Testing
import UserListDomain
import UserListPresentation

/// The detail (edit) screen: loading, the draft rules, saving, conflicts and live changes.
@MainActor
@Suite struct UserDetailViewModelTests {
    let repository = FakeUserRepository([ada, bob])

    /// A detail screen on `ada`, loaded, with its load asserted.
    private func loadedDetail() async
        -> (UserDetailViewModel, StateRecorder<UserDetailState>, EventLog<UserDetailEvent>)
    {
        let (detail, states, events) = makeDetail(repository, id: ada.id)
        detail.onAppear()
        await states.receive { $0.user = ada; $0.draft = UserFields(ada) }
        return (detail, states, events)
    }

    // MARK: loading

    @Test func onAppearLoadsTheUserAndStartsTheDraftFromItsName() async {
        repository.hold(.fetchUser)
        let (detail, states, _) = makeDetail(repository, id: ada.id)
        #expect(detail.userID == ada.id)
        #expect(!detail.state.isDirty && !detail.state.canSave)

        detail.onAppear()
        detail.onAppear()   // already loading
        await repository.awaitHeldCalls(1)
        states.expectNoMoreChanges()
        repository.release()
        await states.receive { $0.user = ada; $0.draft = UserFields(ada) }

        detail.onAppear()   // loaded: nothing more
        await settle()
        states.expectNoMoreChanges()
        #expect(repository.calls(of: .fetchUser) == [.fetchUser(ada.id)])
    }

    @Test func aFailedLoadShowsTheErrorAndOnAppearRetries() async {
        repository.failNext(with: .unavailable(reason: "disk full"))
        let (detail, states, _) = makeDetail(repository, id: ada.id)
        detail.onAppear()
        await states.receive { $0.errorMessage = "The user store is unavailable: disk full" }

        detail.onAppear()
        states.expect { $0.errorMessage = nil }
        await states.receive { $0.user = ada; $0.draft = UserFields(ada) }
        states.expectNoMoreChanges()
    }

    @Test func anUnknownUserShowsNotFound() async {
        let (detail, states, _) = makeDetail(repository, id: userID(999))
        detail.onAppear()
        await states.receive { $0.errorMessage = "That user no longer exists." }
        #expect(!detail.state.canSave)
    }

    @Test func onAppearReturnsTheLoadsOutcome() async {
        let (missing, _, _) = makeDetail(repository, id: userID(999))
        #expect(await missing.onAppear().value == .failure(.notFound(id: userID(999))))
        let (found, _, _) = makeDetail(repository, id: ada.id)
        #expect(await found.onAppear().value == .success(ada))
        #expect(await found.onAppear().value == .success(ada), "already loaded: the stored user, no second fetch")
        #expect(repository.count(of: .fetchUser) == 2)
    }

    // MARK: the draft rules

    @Test func anUnchangedDraftIsNotDirty() async {
        let (detail, states, _) = await loadedDetail()
        detail.setDraftName("Ada King")
        states.expect { $0.draftName = "Ada King" }
        #expect(detail.state.isDirty && detail.state.canSave)
        detail.setDraftName("Ada Lovelace")
        states.expect { $0.draftName = "Ada Lovelace" }
        #expect(!detail.state.isDirty && !detail.state.canSave)
        detail.setDraftName("Ada Lovelace")
        states.expectNoMoreChanges()
    }

    @Test(arguments: ["", " ", "   \n\t"])
    func aBlankDraftIsDirtyButCannotBeSaved(draft: String) async {
        let (detail, states, _) = await loadedDetail()
        detail.setDraftName(draft)
        states.expect { $0.draftName = draft }
        #expect(detail.state.isDirty)
        #expect(!detail.state.canSave)

        detail.save()
        await settle()
        states.expectNoMoreChanges()
        #expect(repository.count(of: .update) == 0)
    }

    @Test func twoHundredCharactersCanBeSavedButNot201() async {
        let (detail, _, _) = await loadedDetail()
        detail.setDraftName(String(repeating: "é", count: 200))
        #expect(detail.state.canSave)
        detail.setDraftName("  " + String(repeating: "é", count: 200) + " ")  // trimmed first
        #expect(detail.state.canSave)
        detail.setDraftName(String(repeating: "é", count: 201))
        #expect(detail.state.isDirty)
        #expect(!detail.state.canSave)
        detail.save()
        await settle()
        #expect(repository.count(of: .update) == 0)
        #expect(!detail.state.isSaving)
    }

    @Test func nothingCanBeSavedBeforeTheUserLoads() async {
        let (detail, states, _) = makeDetail(repository, id: ada.id)
        detail.setDraftName("Ada King")
        states.expect { $0.draftName = "Ada King" }
        #expect(!detail.state.isDirty && !detail.state.canSave)
        detail.save()
        await settle()
        #expect(repository.count(of: .update) == 0)
    }

    // MARK: saving

    @Test func aSuccessfulSaveEmitsDidSaveAndClearsDirty() async {
        let (detail, states, events) = await loadedDetail()
        repository.hold(.update)
        detail.setDraftName("  Ada King ")
        states.expect { $0.draftName = "  Ada King " }

        detail.save()
        states.expect { $0.isSaving = true }
        #expect(!detail.state.canSave)   // while saving, no second save
        detail.save()
        await repository.awaitHeldCalls(1)
        await settle()
        #expect(repository.count(of: .update) == 1)
        #expect(events.all.isEmpty)

        repository.release()
        let saved = User(id: ada.id, name: "Ada King", email: ada.email, version: 2)
        await states.receive { $0.isSaving = false; $0.user = saved; $0.draftName = "Ada King" }
        #expect(events.all == [.didSave(saved)])
        #expect(!detail.state.isDirty)
        #expect(repository.calls(of: .update) == [.update(User(id: ada.id, name: "Ada King", email: ada.email, version: 1))])
        states.expectNoMoreChanges()
    }

    @Test func whatIsTypedWhileSavingIsKept() async {
        let (detail, states, events) = await loadedDetail()
        repository.hold(.update)
        detail.setDraftName("Ada King")
        states.expect { $0.draftName = "Ada King" }
        detail.save()
        states.expect { $0.isSaving = true }
        await repository.awaitHeldCalls(1)
        detail.setDraftName("Ada, Countess of Lovelace")
        states.expect { $0.draftName = "Ada, Countess of Lovelace" }

        repository.release()
        let saved = User(id: ada.id, name: "Ada King", email: ada.email, version: 2)
        await states.receive { $0.isSaving = false; $0.user = saved }
        #expect(events.all == [.didSave(saved)])
        #expect(detail.state.isDirty && detail.state.canSave)
    }

    @Test func aFailedSaveKeepsTheDraftAndShowsTheError() async {
        let (detail, states, events) = await loadedDetail()
        detail.setDraftName("Ada King")
        states.expect { $0.draftName = "Ada King" }
        repository.failNext(with: .unavailable(reason: "read-only file system"))

        detail.save()
        states.expect { $0.isSaving = true }
        await states.receive {
            $0.isSaving = false
            $0.errorMessage = "The user store is unavailable: read-only file system"
        }
        #expect(events.all.isEmpty)
        #expect(detail.state.user == ada)
        #expect(detail.state.canSave)

        // Trying again clears the error in the same change that starts the save.
        detail.save()
        states.expect { $0.errorMessage = nil; $0.isSaving = true }
        await states.receive {
            $0.isSaving = false
            $0.user = User(id: ada.id, name: "Ada King", email: ada.email, version: 2)
        }
        #expect(events.all.count == 1)
    }

    @Test func dismissErrorClearsTheMessage() async {
        let (detail, states, _) = await loadedDetail()
        detail.setDraftName("Ada King")
        states.expect { $0.draftName = "Ada King" }
        repository.failNext(with: .forbidden(reason: "You may look but not change."))
        detail.save()
        states.expect { $0.isSaving = true }
        await states.receive { $0.isSaving = false; $0.errorMessage = "You may look but not change." }
        detail.dismissError()
        states.expect { $0.errorMessage = nil }
        states.expectNoMoreChanges()
    }

    @Test func aSaveThatLosesTheRaceMergesTheirsAndTheNextSaveWritesOnlyMine() async {
        let (detail, states, events) = await loadedDetail()
        let countess = User(id: ada.id, name: "Countess", email: ada.email, version: 2)
        repository.put(countess)   // someone else renamed her first
        detail.setDraft(.email, "ada@king.example")
        states.expect { $0.draftEmail = "ada@king.example" }

        #expect(await detail.save().value == .failure(.conflict(stored: countess)))
        #expect(detail.state.user == countess, "the draft is now based on their version")
        #expect(detail.state.draftName == "Countess", "their name, which I did not touch, is on screen")
        #expect(detail.state.draftEmail == "ada@king.example", "my email is kept")
        #expect(detail.state.followed.map(\.field) == [.name] && detail.state.conflicts.isEmpty)
        #expect(detail.state.errorMessage?.contains("Someone else saved this user first") == true)
        #expect(events.all.isEmpty)

        let saved = User(id: ada.id, name: "Countess", email: "ada@king.example", version: 3)
        #expect(await detail.save().value == .success(saved), "the second save writes my email over their name")
        #expect(repository.stored(ada.id) == saved && events.all == [.didSave(saved)])
        #expect(detail.state.followed.isEmpty && !detail.state.isDirty)
    }

    // MARK: live changes

    @Test func anUntouchedScreenFollowsAChange() async {
        let (detail, states, _) = await loadedDetail()
        let renamed = User(id: ada.id, name: "Ada King", email: ada.email, version: 2)
        detail.apply(.saved(renamed))
        states.expect { $0.user = renamed; $0.draftName = "Ada King" }
        #expect(!detail.state.isDirty)
    }

    @Test func aSaveByOthersIsMergedIntoADraftAtOnce() async {
        let (detail, states, _) = await loadedDetail()
        detail.setDraft(.name, "Mine")
        states.expect { $0.draftName = "Mine" }
        let theirs = User(id: ada.id, name: ada.name, email: "lovelace@example.com", version: 2)
        detail.apply(.saved(theirs))
        states.expect {
            $0.user = theirs
            $0.draftEmail = "lovelace@example.com"
            $0.followed = [FollowedChange(field: .email, version: 2)]
        }
        #expect(detail.state.dirtyFields == [.name], "only my name is mine to save")
        detail.setDraft(.name, "Mine!")
        states.expect { $0.draftName = "Mine!"; $0.followed = [] }   // the mark lasts until one types
    }

    @Test func bothChangingOneFieldIsAConflictNoSaveUntilChosen() async {
        let (detail, states, _) = await loadedDetail()
        detail.setDraft(.name, "Mine")
        states.expect { $0.draftName = "Mine" }
        let theirs = User(id: ada.id, name: "Theirs", email: ada.email, version: 2)
        repository.put(theirs)
        detail.apply(.saved(theirs))
        states.expect { $0.user = theirs; $0.conflicts = [FieldConflict(field: .name, theirs: "Theirs", version: 2)] }
        #expect(!detail.state.canSave)
        guard case .failure(.validation(.name, let message))? = Optional(await detail.save().value) else {
            Issue.record("a save before the choice is refused")
            return
        }
        #expect(message.contains("keep mine or take theirs"))
        #expect(repository.stored(ada.id) == theirs, "nothing was written")

        #expect(detail.keepMine(.name))
        states.expect { $0.conflicts = [] }
        #expect(await detail.save().value == .success(User(id: ada.id, name: "Mine", email: ada.email, version: 3)))
    }

    @Test func takingTheirsSettlesTheConflictWithTheirValue() async {
        let (detail, states, _) = await loadedDetail()
        detail.setDraft(.name, "Mine")
        detail.setDraft(.email, "mine@example.com")
        let theirs = User(id: ada.id, name: "Theirs", email: ada.email, version: 2)
        detail.apply(.saved(theirs))
        #expect(detail.state.conflicts.map(\.field) == [.name])
        #expect(!detail.takeTheirs(.email), "no conflict on the email")
        #expect(detail.takeTheirs(.name))
        #expect(detail.state.draftName == "Theirs" && detail.state.dirtyFields == [.email] && detail.state.canSave)
        _ = states
    }

    @Test func dismissErrorClearsTheMessageButAConflictWaitsForAChoice() async {
        let (detail, _, _) = await loadedDetail()
        let renamed = User(id: ada.id, name: "Theirs", email: ada.email, version: 2)
        repository.put(renamed)
        detail.setDraftName("Mine")
        #expect(await detail.save().value == .failure(.conflict(stored: renamed)))
        #expect(!detail.state.conflicts.isEmpty && detail.state.errorMessage != nil)
        detail.dismissError()
        #expect(detail.state.errorMessage == nil)
        #expect(detail.state.conflicts.map(\.field) == [.name], "a conflict is settled by a choice only")
        #expect(detail.state.draftName == "Mine", "the draft survives the dismissal")
    }

    @Test func saveReturnsItsOutcome() async {
        let (detail, _, _) = await loadedDetail()
        #expect(await detail.save().value == .success(ada), "nothing to save: the stored user")
        detail.setDraftName("  ")
        guard case .failure(.validation)? = Optional(await detail.save().value) else {
            Issue.record("a blank name is a validation failure")
            return
        }
        detail.setDraftName("Ada King")
        #expect(await detail.save().value == .success(User(id: ada.id, name: "Ada King", email: ada.email, version: 2)))
    }

    @Test func oldOrForeignChangesAreIgnored() async {
        let (detail, states, _) = await loadedDetail()
        var same = ada
        same.name = "Older"
        detail.apply(.saved(same))                      // not newer than what is shown
        detail.apply(.saved(User(id: bob.id, name: "Bobby", email: bob.email, version: 9)))
        detail.apply(.removed(id: bob.id))
        states.expectNoMoreChanges()
    }

    @Test func aChangeWhileSavingIsLeftToTheSave() async {
        let (detail, states, _) = await loadedDetail()
        repository.hold(.update)
        detail.setDraftName("Ada King")
        states.expect { $0.draftName = "Ada King" }
        detail.save()
        states.expect { $0.isSaving = true }
        await repository.awaitHeldCalls(1)
        let saved = User(id: ada.id, name: "Ada King", email: ada.email, version: 2)
        detail.apply(.saved(saved))   // the feed announces our own save before the reply
        states.expectNoMoreChanges()
        repository.release()
        await states.receive { $0.isSaving = false; $0.user = saved }
        detail.apply(.saved(saved))   // and again after it: already shown
        states.expectNoMoreChanges()
    }

    @Test func aRemovalKeepsTheDraftAndRecreatingSavesItAgain() async {
        let (detail, states, _) = await loadedDetail()
        detail.setDraftName("Ada King")
        states.expect { $0.draftName = "Ada King" }
        detail.apply(.removed(id: ada.id))
        states.expect { $0.user = nil; $0.removal = Removal(base: ada); $0.errorMessage = "This user was removed." }
        #expect(!detail.state.canSave && detail.state.draftName == "Ada King")
        detail.onAppear()
        await settle()
        #expect(repository.count(of: .fetchUser) == 1)

        _ = try? await repository.remove(id: ada.id)
        #expect(detail.recreate())
        states.expect { $0.removal = nil; $0.isNew = true; $0.errorMessage = nil }
        #expect(detail.state.canSave)
        let created = await detail.save().value
        #expect((try? created.get())?.name == "Ada King" && repository.stored(ada.id)?.name == "Ada King")
        #expect(!detail.state.isNew && !detail.state.isDirty)
    }

    @Test func aUserAddedBackAfterItsRemovalIsShownAgain() async {
        // An undo of "added" removes the user; undoing that adds it back: the screen must show
        // it again, not stay on "loading…".
        let (detail, states, _) = await loadedDetail()
        detail.apply(.removed(id: ada.id))
        states.expect { $0.user = nil; $0.removal = Removal(base: ada); $0.errorMessage = "This user was removed." }
        var back = ada
        back.version = 3
        detail.apply(.added(back))
        states.expect { $0.user = back; $0.removal = nil; $0.errorMessage = nil }
        #expect(!detail.state.isDirty)
    }

    /// Someone else creates the removed user again (the undo of the removal, or another
    /// screen's "create it again" with its own draft): merged as a save over the user this screen
    /// last had. Fields this person left follow the new user; only their own edits stay a draft.
    @Test func aUserCreatedAgainByAnotherIsMergedLikeTheirSave() async {
        let (detail, states, _) = await loadedDetail()
        var recreated = ada
        recreated.name = "Ada B"
        recreated.version = 3
        detail.apply(.removed(id: ada.id))
        states.expect { $0.user = nil; $0.removal = Removal(base: ada); $0.errorMessage = "This user was removed." }
        detail.apply(.added(recreated))
        states.expect { $0.user = recreated; $0.draftName = "Ada B"; $0.removal = nil; $0.errorMessage = nil }
        #expect(!detail.state.isDirty, "nobody typed here: no draft to save over theirs")

        let (typing, typed, _) = await loadedDetail()
        typing.setDraft(.email, "ada@typed.example")
        typed.expect { $0.draftEmail = "ada@typed.example" }
        typing.apply(.removed(id: ada.id))
        typed.expect { $0.user = nil; $0.removal = Removal(base: ada); $0.errorMessage = "This user was removed." }
        typing.apply(.added(recreated))
        typed.expect {
            $0.user = recreated
            $0.draftName = "Ada B"
            $0.removal = nil
            $0.errorMessage = nil
            $0.followed = [FollowedChange(field: .name, version: 3)]
        }
        #expect(typing.state.dirtyFields == [.email])
    }

    // MARK: read-only, new users

    @Test func aReadOnlyScreenTakesNoEditsAndDoesNotSave() async {
        let (detail, states, _) = await loadedDetail()
        detail.setReadOnly(true)
        states.expect { $0.isReadOnly = true }
        #expect(!detail.setDraft(.name, "Typed"))
        states.expectNoMoreChanges()
        let refused = await detail.save().value
        guard case .failure(.forbidden) = refused else {
            Issue.record("a read-only screen's save is forbidden, got \(refused)")
            return
        }
    }

    @Test func aNewUserScreenValidatesAsYouTypeAndItsSaveAddsTheUser() async {
        let id = userID(900)
        let detail = UserDetailViewModel(newUserID: id, useCases: UserUseCases(repository: repository))
        #expect(detail.state.isNew && !detail.state.canSave)
        #expect(detail.state.fieldErrors[.name] == "The name cannot be empty.")
        detail.setDraft(.name, "Grace Hopper")
        detail.setDraft(.email, "grace@")
        #expect(detail.state.fieldErrors[.email]?.contains("does not look like an email address") == true)
        detail.setDraft(.email, "grace@example.com")
        detail.setDraft(.avatarURL, "ftp://x")
        #expect(detail.state.fieldErrors[.avatarURL] != nil && !detail.state.canSave)
        detail.setDraft(.avatarURL, "")
        #expect(detail.state.fieldErrors.isEmpty && detail.state.canSave)
        let added = try? await detail.save().value.get()
        #expect(added?.id == id && added?.email == "grace@example.com" && repository.stored(id) != nil)
        #expect(!detail.state.isNew && detail.state.user == added)
    }

    @Test func eachFieldHasItsOwnDirtyFlagAndValidation() async {
        let (detail, _, _) = await loadedDetail()
        detail.setDraft(.email, "not an email")
        #expect(detail.state.dirtyFields == [.email] && !detail.state.canSave)
        #expect(detail.state.fieldErrors.keys.sorted { $0.rawValue < $1.rawValue } == [.email])
        detail.setDraft(.email, ada.email)
        detail.setDraft(.avatarURL, "https://example.com/a.png")
        #expect(detail.state.dirtyFields == [.avatarURL] && detail.state.canSave)
        let saved = try? await detail.save().value.get()
        #expect(saved?.avatarURL == "https://example.com/a.png" && saved?.name == ada.name)
    }

    @Test func aConflictNamesItsAuthorFromTheHistory() async {
        let store = FakeHistoryStore([ada])
        let detail = UserDetailViewModel(loaded: ada, useCases: UserUseCases(repository: store, history: store))
        detail.setDraft(.name, "Mine")
        var theirs = ada
        theirs.name = "Theirs"
        let alice = ChangeAuthor(uid: 1001, userName: "alice", client: "userctl", via: .command)
        let saved = try? await store.update(theirs, by: alice)
        detail.apply(.saved(saved!))
        #expect(detail.state.conflicts.first?.field == .name)
        await stateChanges(of: detail).expect { detail.state.conflicts.first?.author != nil }
        #expect(detail.state.conflicts.first?.author == "alice")
    }

    // MARK: restoring

    @Test func aRestoredScreenReloadsAndKeepsItsDraft() async {
        let (original, _, _) = await loadedDetail()
        original.setDraftName("Ada King")
        let saved = original.state

        let restored = UserDetailViewModel(restoring: saved, useCases: UserUseCases(repository: repository))
        let states = StateRecorder(restored.state)
        restored.onStateChange = { [unowned restored] in states.record(restored.state) }
        restored.onAppear()
        await repository.awaitCalls(of: .fetchUser, count: 2)
        await states.until { restored.state.user != nil }
        await settle()
        #expect(restored.state.draftName == "Ada King")
        #expect(restored.state.isDirty)
        states.expectNoMoreChanges()   // the store still holds what the draft is based on
    }

    @Test func aRestoredDraftIsMergedWithASaveMadeMeanwhile() async {
        let (original, _, _) = await loadedDetail()
        original.setDraftName("Ada King")
        var saved = original.state
        saved.isSaving = true        // saved mid-save: the restored screen is not saving
        let theirs = User(id: ada.id, name: "Theirs", email: "theirs@example.com", version: 2)
        repository.put(theirs)

        let restored = UserDetailViewModel(restoring: saved, useCases: UserUseCases(repository: repository))
        #expect(!restored.state.isSaving)
        restored.onAppear()
        await stateChanges(of: restored).expect { restored.state.user == theirs }
        #expect(restored.state.draftName == "Ada King")
        #expect(restored.state.conflicts == [FieldConflict(field: .name, theirs: "Theirs", version: 2)])
        #expect(restored.state.draftEmail == "theirs@example.com", "their email, which the draft left, follows")
        guard case .failure(.validation(.name, _))? = Optional(await restored.save().value) else {
            Issue.record("no save before the choice")
            return
        }
    }

    @Test func aRestoredUntouchedScreenFollowsASaveMadeMeanwhile() async {
        let (original, _, _) = await loadedDetail()
        let theirs = User(id: ada.id, name: "Theirs", email: ada.email, version: 2)
        repository.put(theirs)

        let restored = UserDetailViewModel(restoring: original.state, useCases: UserUseCases(repository: repository))
        let states = StateRecorder(restored.state)
        restored.onStateChange = { [unowned restored] in states.record(restored.state) }
        restored.onAppear()
        await states.receive { $0.user = theirs; $0.draftName = "Theirs" }
        #expect(!restored.state.isDirty)
    }

    @Test func stateEncodesTheDerivedFlagsAndDecodesWithoutThem() throws {
        var state = UserDetailState(userID: ada.id)
        state.user = ada
        state.draft = UserFields(ada)
        state.draftName = "Ada King"
        let data = try JSONEncoder().encode(state)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["isDirty"] as? Bool == true)
        #expect(object["canSave"] as? Bool == true)
        #expect(try JSONDecoder().decode(UserDetailState.self, from: data) == state)
    }
}
