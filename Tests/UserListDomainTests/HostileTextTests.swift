import Foundation
import Testing
import UserListDomain

/// Names and emails that would hurt a terminal or blow up a frame are refused before any store.
@Suite struct HostileTextTests {
    @Test(arguments: [
        "Ada\u{1B}]0;PWNED\u{07}", "Ada\u{1B}[2J", "Ada\tLovelace", "Ada\nLovelace", "Ada\u{7F}",
        "Ada\u{85}x", "Ada\u{9B}31m", "Ada\u{0}",
    ])
    func controlCharactersInANameAreRefused(name: String) {
        #expect(throws: UserError.self) { try UserValidation.validName(name) }
        do {
            _ = try UserValidation.validName(name)
        } catch {
            #expect(error.message.contains("control character"), "\(error.message)")
        }
    }

    @Test(arguments: ["\u{202E}", "\u{202A}", "\u{202D}", "\u{2066}", "\u{2069}", "\u{200E}", "\u{200F}", "\u{061C}"])
    func bidiControlsInANameAreRefused(control: String) {
        do {
            _ = try UserValidation.validName("evil\(control)txt.exe")
            Issue.record("accepted a name with \(control.unicodeScalars.first!.value)")
        } catch {
            #expect(error.message.contains("text-direction control"), "\(error.message)")
        }
    }

    @Test func controlAndBidiCharactersInAnEmailAreRefused() {
        #expect(throws: UserError.self) { try UserValidation.validEmail("ada\u{1B}[2J@example.com") }
        #expect(throws: UserError.self) { try UserValidation.validEmail("ada\u{202E}@example.com") }
    }

    @Test func aOneMegabyteCharacterIsRefused() {
        // "!" and 450,000 combining acute accents: one character, 900 KB.
        let name = "!" + String(repeating: "\u{301}", count: 450_000)
        #expect(name.count == 1)
        do {
            _ = try UserValidation.validName(name)
            Issue.record("accepted a 900 KB name")
        } catch {
            #expect(error == .validation(field: .name, message: "The name is 900001 bytes long; at most 800 are allowed."))
        }
    }

    @Test func aCharacterWithTooManyScalarsIsRefusedEvenWhenSmall() {
        let name = "a" + String(repeating: "\u{301}", count: 20)  // 41 bytes, one character
        do {
            _ = try UserValidation.validName(name)
            Issue.record("accepted a stack of 20 accents")
        } catch {
            #expect(error.message.contains("21 code points"), "\(error.message)")
        }
    }

    @Test func realNamesWithAccentsAndEmojiFit() throws {
        #expect(try UserValidation.validName("Zoë Brontë") == "Zoë Brontë")
        #expect(try UserValidation.validName("Ada 👩🏽‍💻") == "Ada 👩🏽‍💻")
        #expect(try UserValidation.validName("Family 👨‍👩‍👧‍👦") == "Family 👨‍👩‍👧‍👦")
        #expect(try UserValidation.validName("e\u{301}mile") == "e\u{301}mile")
    }

    @Test func namesAreBoundedInBytesAsWellAsCharacters() throws {
        let twoHundredWide = String(repeating: "😀", count: 200)  // 200 characters, 800 bytes
        #expect(try UserValidation.validName(twoHundredWide) == twoHundredWide)
        #expect(throws: UserError.self) { try UserValidation.validName(twoHundredWide + "a") }
        let bytes = String(repeating: "é", count: 199) + String(repeating: "\u{301}", count: 5)  // 199 chars, 408 bytes: fine
        #expect(try UserValidation.validName(bytes).count == 199)
    }

    @Test func emailsAreBoundedInBytes() {
        let long = String(repeating: "é", count: 200) + "@example.com"  // 212 characters, 412 bytes
        do {
            _ = try UserValidation.validEmail(long)
            Issue.record("accepted a 412-byte email")
        } catch {
            #expect(error.message.contains("bytes long"), "\(error.message)")
        }
    }

    @Test(arguments: ["not a url", "ftp://example.com/a.png", "/relative/a.png", "https://", "javascript:alert(1)",
                      "https://exa mple.com/a.png", "https://example.com/\u{1B}[2J"])
    func avatarURLsMustBeAbsoluteHTTP(url: String) {
        do {
            _ = try UserValidation.validAvatarURL(url)
            Issue.record("accepted avatar URL \(url)")
        } catch {
            guard case .validation(.avatarURL, _) = error else {
                Issue.record("wrong error \(error)")
                return
            }
        }
    }

    @Test func goodAvatarURLsAndNoneAreAccepted() throws {
        #expect(try UserValidation.validAvatarURL("https://avatars.example.com/1.png") == "https://avatars.example.com/1.png")
        #expect(try UserValidation.validAvatarURL("HTTP://example.com/a.png") == "HTTP://example.com/a.png")
        #expect(try UserValidation.validAvatarURL(nil) == nil)
        #expect(try UserValidation.validAvatarURL("  ") == nil)
    }

    @Test func addingAUserWithABadAvatarNeverReachesTheStore() async throws {
        let repository = RecordingRepository([])
        await #expect(throws: UserError.self) {
            _ = try await AddUserUseCase(repository: repository).execute(
                NewUser(name: "Ada", email: "ada@example.com", avatarURL: "not a url"))
        }
        #expect(try await repository.fetchPage(PageRequest(limit: 10)).users.isEmpty)
    }
}

/// The one sort and search key (TextKey), as a person would notice it.
@Suite struct TextKeyTests {
    @Test func precomposedAndDecomposedFormsAreOneKey() {
        #expect(TextKey.fold("Émile") == TextKey.fold("E\u{301}mile"))
        #expect(TextKey.fold("Émile") == "emile")
    }

    @Test func caseAccentsAndWidthFoldAway() {
        #expect(TextKey.fold("ZOË") == "zoe")
        #expect(TextKey.fold("Ｆｕｌｌ") == "full")
        #expect(TextKey.fold("ﬁsh") == "fish")
    }

    @Test func germanSharpSFoldsToSS() {
        #expect(TextKey.fold("Straße") == "strasse")
        #expect(TextKey.fold("STRASSE") == TextKey.fold("straße"))
    }

    @Test func turkishDottedCapitalIFoldsToPlainI() {
        #expect(TextKey.fold("İstanbul") == "istanbul")
        #expect(TextKey.fold("ISTANBUL") == "istanbul")
        // Dotless ı is a letter of its own without a Turkish locale.
        #expect(TextKey.fold("ılık") == "ılık")
    }

    @Test func cjkKeepsItsCharacters() {
        #expect(TextKey.fold("山田太郎") == "山田太郎")
        #expect(TextKey.fold("박지훈") == "박지훈")
    }

    @Test func asciiFastPathAgreesWithTheFullFold() {
        for text in ["Ada Lovelace", "ADA@EXAMPLE.COM", "o'brien-smith_42", "~!@#$%^&*()"] {
            #expect(TextKey.fold(text) == text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil))
        }
    }
}
