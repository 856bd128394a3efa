import Testing
@testable import userctl
import UserListWire

/// Which history entries `userctl watch` reports for a `reloaded` event: an import by its kind,
/// wherever it was made (another daemon's reads as that source), and the undo of one.
@Suite struct WatchImportsTests {
    @Test func anImportAnotherDaemonMadeIsReportedAsAnImport() throws {
        let entry = try JSONValue(parsing: #"""
            {"entry":62,"kind":"imported","via":"daemon","user":"erin","uid":1003,"reverts":null,
             "import":{"added":20000,"updated":5,"removed":0,"source":"big.json"}}
            """#)
        let item = try #require(WatchImports.importItem(entry, number: 62))
        #expect(item.text == "erin imported 20,005 users (#62)")
    }

    @Test func theUndoOfAnImportSaysWhatItUndid() throws {
        let entry = try JSONValue(parsing: #"""
            {"entry":33,"kind":"imported","via":"command","user":"bob","uid":1002,"reverts":30,
             "import":{"added":0,"updated":9,"removed":299,"source":"import.json"}}
            """#)
        let item = try #require(WatchImports.importItem(entry, number: 33))
        #expect(item.text == "bob undid import #30: 299 removed, 9 restored (#33)")
        #expect(item.json["undid"] == .int(30) && item.json["removed"] == .int(299))
        // An undo is not folded into the same person's imports around it.
        let imported = Import(user: "bob", uid: 1002, count: 5, firstEntry: 31, lastEntry: 31)
        #expect(WatchImports.grouped([item, imported]).count == 2)
    }

    @Test func aSaveIsNoImport() throws {
        let entry = try JSONValue(parsing: #"{"entry":7,"kind":"saved","via":"command","user":"bob","reverts":null}"#)
        #expect(WatchImports.importItem(entry, number: 7) == nil)
    }

    typealias Import = WatchImports.Import
}
