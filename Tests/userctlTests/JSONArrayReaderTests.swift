import Foundation
import Testing
@testable import userctl

/// The import's streaming reader cuts a JSON array into its elements without reading it whole:
/// strings holding brackets, commas and escaped quotes, nesting, whitespace, an element across
/// block boundaries, and inputs that are not an array or end early.
@Suite struct JSONArrayReaderTests {
    private func elements(_ text: String) throws -> [String] {
        let path = NSTemporaryDirectory() + "userctl-reader-\(UUID().uuidString).json"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { unlink(path) }
        let reader = try JSONArrayReader(path: path)
        var out: [String] = []
        while let element = try reader.next() { out.append(String(decoding: element, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(reader.bytesRead <= text.utf8.count)
        return out
    }

    @Test func elementsAreCutAtTopLevelCommasOnly() throws {
        let text = #" [ {"a":"x,]}\"y","b":[1,{"c":2}]} , "s\\" ,3,null,[[]] ]"#
        #expect(try elements(text) == [#"{"a":"x,]}\"y","b":[1,{"c":2}]}"#, #""s\\""#, "3", "null", "[[]]"])
        #expect(try elements("[]").isEmpty)
        #expect(try elements(" \n[\n]\n").isEmpty)
    }

    @Test func anElementLargerThanABlockIsWhole() throws {
        let long = String(repeating: "é,[]\\\"", count: JSONArrayReader.blockSize / 4)
        let element = "{\"name\":\"" + long.replacingOccurrences(of: "\\\"", with: "\\\\\\\"") + "\"}"
        let found = try elements("[" + element + "," + element + "]")
        #expect(found.count == 2 && found[0] == element && found[1] == element)
    }

    @Test func notAnArrayOrTruncatedIsSaid() throws {
        #expect(throws: JSONArrayReader.ReadError.self) { try elements(#"{"users": []}"#) }
        #expect(throws: JSONArrayReader.ReadError.self) { try elements(#"[{"a":1},{"b":"#) }
        #expect(throws: JSONArrayReader.ReadError.self) { try elements("[1,,2]") }
    }

    /// A stray closing brace stays inside its element, for the decoder to refuse that entry by
    /// number, and does not unbalance the rest of the file (it used to make every later comma
    /// look nested, and the whole file was then "truncated").
    @Test func aStrayClosingBraceStaysInItsElement() throws {
        #expect(try elements(#"[{"a":1}},{"b":2},3]"#) == [#"{"a":1}}"#, #"{"b":2}"#, "3"])
    }
}
