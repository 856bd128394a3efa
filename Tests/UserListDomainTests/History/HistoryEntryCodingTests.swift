import Foundation
import Testing
import UserListDomain

/// A session journal keeps a history screen's entries as `Codable` gives them: entries an older
/// daemon wrote (before imports were one entry) still read, and new ones read back whole.
@Suite struct HistoryEntryCodingTests {
    @Test func anEntryWrittenBeforeImportsWereOneEntryStillReads() throws {
        let old = """
            {"id": 7, "at": 786000000, "userID": "13C19EE1-88CD-4505-8A89-9F4777F12A3E", "kind": "saved",
             "author": {"uid": 1001, "userName": "alice", "via": "command"},
             "before": {"name": "Ada", "email": "ada@example.com"},
             "after": {"name": "Ada King", "email": "ada@example.com"}, "versionAfter": 2}
            """
        let entry = try JSONDecoder().decode(HistoryEntry.self, from: Data(old.utf8))
        #expect(entry.id == 7 && entry.kind == .saved && entry.after?.name == "Ada King")
        #expect(!entry.partOf && entry.batch == nil && entry.author.source == nil)
    }

    @Test func anImportAndAUsersPartReadBackWhole() throws {
        let author = ChangeAuthor(uid: 1001, userName: "alice", via: .import, source: "people.json")
        let whole = HistoryEntry(id: 3, at: Date(timeIntervalSince1970: 1_800_000_000), userID: nil, kind: .imported,
                                 author: author, before: nil, after: nil, versionAfter: nil,
                                 batch: BatchSummary(source: "people.json", added: 4, updated: 2))
        var part = whole
        part.userID = UUID()
        part.kind = .added
        part.batch = nil
        part.partOf = true
        for entry in [whole, part] {
            #expect(try JSONDecoder().decode(HistoryEntry.self, from: JSONEncoder().encode(entry)) == entry)
        }
    }
}
