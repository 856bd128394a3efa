import Foundation
import Testing
@testable import UserListData

/// COPY's text format as `PGCopyText` writes and reads it: a value with tabs, newlines,
/// carriage returns or backslashes must arrive as itself, never as extra columns, extra rows or
/// a NULL. (That the server reads it the same is `PostgresStagedImportProcessTests`'.)
@Suite struct PGCopyTextTests {
    static let hostile = ["tab\there", "new\nline", "cr\r\nlf", "back\\slash", "\\N", "\\", "\\t literally", "ends with \\",
                          "\t\t", "", "ünïcødé ✓ 🧪", "a\u{0}b".replacingOccurrences(of: "\u{0}", with: ""), "\\.", "quote\"s 'and' $1"]

    @Test func hostileValuesAreEscapedIntoOneLineOfTheRightColumns() {
        for value in Self.hostile {
            let line = PGCopyText.line(["x", value, nil])
            #expect(line.filter { $0 == "\n" || $0 == "\r\n" }.count == 1, "one row: \(line.debugDescription)")
            #expect(line.hasSuffix("\n"))
            #expect(line.dropLast().split(separator: "\t", omittingEmptySubsequences: false).count == 3, "three columns: \(line.debugDescription)")
            #expect(PGCopyText.fields(line) == ["x", value, nil], "round trip of \(value.debugDescription)")
        }
    }

    @Test func theEscapesAreCOPYs() {
        #expect(PGCopyText.line(["a\tb", "c\nd", "e\\f", "g\rh", nil]) == "a\\tb\tc\\nd\te\\\\f\tg\\rh\t\\N\n")
        // The two-character text "\N" is a value, not NULL.
        #expect(PGCopyText.line(["\\N"]) == "\\\\N\n")
        #expect(PGCopyText.fields("\\\\N\n") == ["\\N"])
        #expect(PGCopyText.fields("\\N\n") == [nil])
    }
}
