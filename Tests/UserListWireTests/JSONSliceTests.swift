import Testing
@testable import UserListWire

/// `JSONSlice` finds a document's parts without building them, and accepts exactly what the
/// parser accepts: `userctl export` writes a daemon's users through it unchecked otherwise.
@Suite struct JSONSliceTests {
    static func slice(_ text: String) throws(JSONParseError) -> JSONSlice { try JSONSlice(validating: Array(text.utf8)) }
    static func text(_ slice: JSONSlice) -> String { String(decoding: slice.bytes, as: UTF8.self) }

    @Test func membersAndElementsAreTheValuesBytes() throws {
        let document = try Self.slice(#" {"id":7, "ok" : true,"result":{"users":[ {"name":"Zoë \"Z\" 山田","n":-1.5e3}, [] ,null],"next":"k\u00e9"}} "#)
        let members = try #require(try document.members())
        #expect(members.map(\.key) == ["id", "ok", "result"])
        #expect(members.map { Self.text($0.value) } == ["7", "true", #"{"users":[ {"name":"Zoë \"Z\" 山田","n":-1.5e3}, [] ,null],"next":"k\u00e9"}"#])
        let result = try #require(try document.member("result"))
        let users = try #require(try result.member("users")?.elements())
        #expect(users.map(Self.text) == [#"{"name":"Zoë \"Z\" 山田","n":-1.5e3}"#, "[]", "null"])
        #expect(try users[0].parsed() == ["name": "Zoë \"Z\" 山田", "n": -1500.0])
        #expect(try result.member("next")?.parsed() == "ké")
        #expect(try document.member("missing") == nil)
        #expect(try document.elements() == nil, "an object is not an array")
        #expect(try users[1].members() == nil, "an array is not an object")
        #expect(try #require(try Self.slice("[]").elements()).isEmpty)
        #expect(try #require(try Self.slice("{}").members()).isEmpty)
    }

    @Test func refusesWhatTheParserRefusesWithTheSameReason() throws {
        let deep = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        let bad: [[UInt8]] = [
            "", "{} x", "[1,2", "[1,]", #"{"a" 1}"#, "\"a\u{01}\"", "tru", "01", "-", "1.", "1e", "[.5]",
            #""\x""#, #""\ud800""#, #""\udc00x""#, #""\u12g4""#, #"{"a":1,}"#, "{1:2}", deep,
        ].map { Array($0.utf8) } + [[0x22, 0x61, 0xC3, 0x28, 0x22], [0x22, 0xC0, 0xAF, 0x22], Array(#""\n"#.utf8) + [0xFF, 0x22]]
        for bytes in bad {
            var parserReason: JSONParseError.Reason?
            do { _ = try JSONValue(parsing: bytes) } catch { parserReason = error.reason }
            var sliceReason: JSONParseError.Reason?
            do { _ = try JSONSlice(validating: bytes) } catch { sliceReason = error.reason }
            #expect(parserReason != nil && sliceReason == parserReason, "\(String(decoding: bytes, as: UTF8.self))")
        }
        let good = [#"{"a":[1,-0,2.5e-3,true,false,null,"\ud83d\ude00 \/ \b\f\n\r\t"],"b":{}}"#, "  [ ]  ", "\"\"", "0"]
        for text in good {
            #expect(try JSONValue(parsing: Self.slice(text).bytes) == JSONValue(parsing: text))
        }
    }
}
