import Foundation
import Testing
@testable import userctl

/// The import's streaming reader cuts a JSON array, or objects one per line (JSON Lines), into
/// its elements without reading it whole: strings holding brackets, commas and escaped quotes,
/// nesting, whitespace, an element across block boundaries, a byte-order mark, and inputs that
/// are neither or end early.
@Suite struct JSONArrayReaderTests {
    private func reader(_ bytes: [UInt8]) throws -> (JSONArrayReader, String) {
        let path = NSTemporaryDirectory() + "userctl-reader-\(UUID().uuidString).json"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (try JSONArrayReader(path: path), path)
    }

    private func elements(_ text: String, byteOrderMark: Bool = false) throws -> [String] {
        let bytes = (byteOrderMark ? [0xEF, 0xBB, 0xBF] : []) + Array(text.utf8)
        let (reader, path) = try reader(bytes)
        defer { unlink(path) }
        var out: [String] = []
        while let element = try reader.next() { out.append(String(decoding: element, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(reader.bytesRead <= bytes.count)
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

    @Test func neitherShapeOrTruncatedIsSaid() throws {
        #expect(throws: JSONArrayReader.ReadError.self) { try elements(#""users""#) }
        #expect(throws: JSONArrayReader.ReadError.self) { try elements("42") }
        #expect(throws: JSONArrayReader.ReadError.self) { try elements(#"[{"a":1},{"b":"#) }
        #expect(throws: JSONArrayReader.ReadError.self) { try elements("[1,,2]") }
        #expect(throws: JSONArrayReader.ReadError.self) { try elements("{\"a\":1}\n{\"b\":") }
        #expect(throws: JSONArrayReader.ReadError.self) { try elements("{\"a\":1}\n[2]\n") }
    }

    /// A second array or text after the closing `]` was dropped without a word.
    @Test func onlySpacesMayFollowTheArray() throws {
        #expect(try elements("[1,2]  \n\n") == ["1", "2"])
        #expect(throws: JSONArrayReader.ReadError.self) { try elements("[1,2][3]") }
        #expect(throws: JSONArrayReader.ReadError.self) { try elements("[1] trailing") }
        #expect(throws: JSONArrayReader.ReadError.self) { try elements("[] []") }
    }

    @Test func objectsOnePerLineAreTheElements() throws {
        let text = "{\"a\":\"}{\\\"\",\"b\":[1,{\"c\":2}]}\n\n{\"d\":\n 3}\r\n{}{\"e\":[]}  \n"
        #expect(try elements(text) == [#"{"a":"}{\"","b":[1,{"c":2}]}"#, "{\"d\":\n 3}", "{}", #"{"e":[]}"#])
        #expect(try elements(#"{"users": []}"#) == [#"{"users": []}"#], "a REST page is one object; userctl decides what it is")
    }

    @Test func aByteOrderMarkIsSkipped() throws {
        #expect(try elements(#"[{"a":1},2]"#, byteOrderMark: true) == [#"{"a":1}"#, "2"])
        #expect(try elements("{\"a\":1}\n{\"b\":2}\n", byteOrderMark: true) == [#"{"a":1}"#, #"{"b":2}"#])
        #expect(try elements("[]", byteOrderMark: true).isEmpty)
    }

    @Test func anElementLookedAtAheadIsTheNextOne() throws {
        let (reader, path) = try reader(Array("{\"a\":1}\n{\"b\":2}".utf8))
        defer { unlink(path) }
        #expect(try reader.peekNext().map { Array($0) } == Array(#"{"a":1}"#.utf8))
        #expect(try reader.next().map { Array($0) } == Array(#"{"a":1}"#.utf8))
        #expect(try reader.next().map { Array($0) } == Array(#"{"b":2}"#.utf8))
        #expect(try reader.next() == nil)
    }

    /// A stray closing brace stays inside its element, for the decoder to refuse that entry by
    /// number, and does not unbalance the rest of the file (it used to make every later comma
    /// look nested, and the whole file was then "truncated").
    @Test func aStrayClosingBraceStaysInItsElement() throws {
        #expect(try elements(#"[{"a":1}},{"b":2},3]"#) == [#"{"a":1}}"#, #"{"b":2}"#, "3"])
    }
}
