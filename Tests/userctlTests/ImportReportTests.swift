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
}
