import Foundation
import Testing
import UserListDomain
import UserListPresentation

/// `canSave` agrees with the store's name rule on what counts as empty and as too long (it
/// trims and counts without Foundation, for speed).
@Suite struct UserDetailCanSaveTests {
    private func state(draft: String) -> UserDetailState {
        var state = UserDetailState(userID: UUID())
        state.user = User(id: state.userID, name: "Ada Lovelace", email: "ada@example.com")
        state.draft = UserFields(state.user!)
        state.draftName = draft
        return state
    }

    @Test func whiteSpaceAloneCannotBeSaved() {
        for draft in [" ", "\u{A0}", "\u{3000}\u{2028}\n\t", "\u{200B}"] {
            #expect(!state(draft: draft).canSave, "\(draft.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }

    @Test func theLengthLimitCountsCharactersAfterTrimming() {
        let limit = UserValidation.maximumNameLength
        #expect(state(draft: String(repeating: "a", count: limit)).canSave)
        #expect(!state(draft: String(repeating: "a", count: limit + 1)).canSave)
        #expect(state(draft: "\u{3000}" + String(repeating: "a", count: limit) + " ").canSave)
        // Two bytes a character: past the limit in bytes, within it in characters.
        #expect(state(draft: String(repeating: "é", count: limit)).canSave)
        #expect(!state(draft: String(repeating: "é", count: limit + 1)).canSave)
        // One character of two scalars ("e" and a combining accent): still one character.
        #expect(state(draft: String(repeating: "e\u{301}", count: limit)).canSave)
    }

    @Test func whatCanBeSavedIsWhatTheStoreAccepts() {
        let limit = UserValidation.maximumNameLength
        for draft in ["  Ada King ", "\u{A0}Zoë\u{3000}", String(repeating: "ü", count: limit), String(repeating: "ü", count: limit + 1), "\u{2029}"] {
            let accepted = (try? UserValidation.validName(draft)) != nil
            #expect(state(draft: draft).canSave == accepted, "\(draft.prefix(20))")
        }
    }
}
