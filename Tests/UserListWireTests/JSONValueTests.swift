import Testing
import UserListWire

@Suite struct JSONValueTests {
    func parse(_ text: String) throws(JSONParseError) -> JSONValue { try JSONValue(parsing: Array(text.utf8)) }
    func text(_ value: JSONValue) -> String { String(decoding: value.serialized(), as: UTF8.self) }

    @Test func serializesCompactlyWithSortedKeys() {
        let value: JSONValue = ["b": [1, 2.5, "x"], "a": nil, "c": ["z": true, "y": false]]
        #expect(text(value) == #"{"a":null,"b":[1,2.5,"x"],"c":{"y":false,"z":true}}"#)
    }

    @Test func escapesStrings() throws {
        let value: JSONValue = .string("q\"b\\n\n\r\t\u{08}\u{0C}\u{01}\u{1F}/é😀")
        #expect(text(value) == #""q\"b\\n\n\r\t\b\f\u0001\u001f/é😀""#)
        #expect(try parse(text(value)) == value)
    }

    @Test func parsesEscapesAndSurrogatePairs() throws {
        #expect(try parse(#""\u00e9\u0041\/\ud83d\ude00""#) == .string("éA/😀"))
        #expect(throws: JSONParseError.self) { try parse(#""\ud83d""#) }
        #expect(throws: JSONParseError.self) { try parse(#""\ude00""#) }
        #expect(throws: JSONParseError.self) { try parse(#""\x""#) }
    }

    @Test func numbersKeepIntegersExact() throws {
        #expect(try parse("9223372036854775807") == .int(.max))
        #expect(try parse("-9223372036854775808") == .int(.min))
        #expect(try parse("9223372036854775808") == .double(9223372036854775808))
        #expect(try parse("1.5e3") == .double(1500))
        #expect(try parse("-0.25") == .double(-0.25))
        #expect(try parse("1.0") == .int(1))
        #expect(text(.double(0.1)) == "0.1")
        #expect(text(.double(3)) == "3")
        #expect(text(.double(.infinity)) == "null")
        for bad in ["01", "1.", ".5", "+1", "1e", "-", "1e400", "--1", "0x10"] {
            #expect(throws: JSONParseError.self, "\(bad)") { try parse(bad) }
        }
    }

    @Test func roundTripsNestedDocuments() throws {
        let value: JSONValue = ["screens": [["id": "list", "state": ["users": [["id": "a", "n": -12, "f": 1.25e-7]]]]]]
        #expect(try JSONValue(parsing: value.serialized()) == value)
        #expect(try parse(" \n\t{ \"a\" : [ 1 , { } , [ ] ] } \r\n") == ["a": [1, [:], []]])
    }

    @Test func rejectsInvalidUTF8() {
        let bytes: [UInt8] = [0x22, 0x61, 0xC3, 0x28, 0x22]  // "a\xC3(" — broken 2-byte sequence
        #expect { try JSONValue(parsing: bytes) } throws: { ($0 as? JSONParseError)?.reason == .invalidUTF8 }
        let overlong: [UInt8] = [0x22, 0xC0, 0xAF, 0x22]
        #expect { try JSONValue(parsing: overlong) } throws: { ($0 as? JSONParseError)?.reason == .invalidUTF8 }
        let escapedThenBroken: [UInt8] = Array(#""\n"#.utf8) + [0xFF, 0x22]
        #expect { try JSONValue(parsing: escapedThenBroken) } throws: { ($0 as? JSONParseError)?.reason == .invalidUTF8 }
    }

    @Test func rejectsTrailingGarbageAndTruncation() {
        #expect { try parse("{} x") } throws: { ($0 as? JSONParseError)?.reason == .trailingData }
        #expect { try parse("[1,2") } throws: { ($0 as? JSONParseError)?.reason == .unexpectedEnd }
        #expect { try parse("") } throws: { ($0 as? JSONParseError)?.reason == .unexpectedEnd }
        #expect { try parse("[1,]") } throws: { ($0 as? JSONParseError)?.reason == .unexpectedByte }
        #expect { try parse("{\"a\" 1}") } throws: { ($0 as? JSONParseError)?.reason == .unexpectedByte }
        #expect { try parse("\"a\u{01}\"") } throws: { ($0 as? JSONParseError)?.reason == .controlCharacterInString }
        #expect { try parse("tru") } throws: { ($0 as? JSONParseError)?.reason == .unexpectedEnd }
    }

    @Test func rejectsDeepNestingWithoutCrashing() {
        let deep = String(repeating: "[", count: 100_000)
        #expect { try parse(deep) } throws: { ($0 as? JSONParseError)?.reason == .tooDeep }
        let ok = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        #expect(throws: Never.self) { try parse(ok) }
    }

    @Test func equalityIgnoresKeyOrderAndNumberSpelling() throws {
        #expect(try parse(#"{"a":1,"b":2}"#) == parse(#"{"b":2.0,"a":1}"#))
        #expect(JSONValue.int(1) != .string("1"))
        #expect(JSONValue.int(Int64.max) != .double(9223372036854775807.0))
    }

    @Test func matchesFoundationCodable() throws {
        let value: JSONValue = ["a": [1, 2.5, "x", nil, true]]
        let data = try JSONEncoderShim.encode(value)
        #expect(try JSONValue(parsing: data) == value)
    }
}
