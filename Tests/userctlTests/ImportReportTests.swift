import Testing
import Foundation
@testable import userctl

/// What `userctl import` says it did, from the entries read, the users they name and the users
/// written: users already as the file has them are told apart from entries repeating a user.
@Suite struct ImportReportTests {
    @Test func everyEntryWrittenSaysNothingMore() {
        #expect(ImportReport(read: 3, users: 3, written: 3).summary(of: "f.json") == "imported 3 users from f.json")
    }

    @Test func usersAlreadyUpToDateAreCounted() {
        #expect(ImportReport(read: 3, users: 3, written: 1).summary(of: "f.json") == "imported 1 user from f.json (2 already up to date)")
    }

    @Test func aRepeatedUserIsNotCalledUpToDate() {
        #expect(ImportReport(read: 3, users: 2, written: 2).summary(of: "f.json")
                == "imported 2 users from f.json (1 entry repeats a user named earlier in the file: each user's last entry counts)")
        #expect(ImportReport(read: 5, users: 2, written: 0).summary(of: "f.json")
                == "imported 0 users from f.json (2 already up to date; 3 entries repeat users named earlier in the file: each user's last entry counts)")
    }

    @Test func idsAreCountedAsTheDaemonComparesThem() {
        var ids = DistinctUserIDs()
        ids.insert("0C7FB66C-DEE8-804B-A72E-89B3BCC5DE0E")
        ids.insert("0c7fb66c-dee8-804b-a72e-89b3bcc5de0e")
        ids.insert("not-a-uuid")
        ids.insert("not-a-uuid")
        ids.insert("93f66333-01f2-857a-96cb-af519951a4dd")
        #expect(ids.count == 3)
    }

    /// `bits` reads an id exactly when it is a UUID's text as the daemon reads one (8-4-4-4-12
    /// hex digits, either case; Foundation's `sscanf` would also take signs, spaces and "0x"),
    /// and two texts get the same bits exactly when they are one UUID.
    @Test func idBitsAreTheUUIDsOfStrictTexts() throws {
        let strict = try Regex("^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
        let alphabet = Array("0123456789abcdefABCDEF-g +x")
        for _ in 0..<2_000 {
            let uuid = UUID()
            let text = Bool.random() ? uuid.uuidString : uuid.uuidString.lowercased()
            var mutated = Array(text)
            mutated[Int.random(in: 0..<mutated.count)] = alphabet.randomElement()!
            for candidate in [text, String(mutated), String(text.dropLast()), text + "0"] {
                let bits = DistinctUserIDs.bits(candidate)
                #expect((bits != nil) == (try strict.wholeMatch(in: candidate) != nil), "\(candidate)")
                if let bits, let parsed = UUID(uuidString: candidate) {
                    #expect(bits == DistinctUserIDs.bits(parsed.uuidString), "\(candidate)")
                }
            }
            #expect(DistinctUserIDs.bits(text) == DistinctUserIDs.bits(text.uppercased()))
            #expect(DistinctUserIDs.bits(text) != DistinctUserIDs.bits(UUID().uuidString))
        }
    }
}
