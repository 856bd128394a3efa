import Foundation
import Testing
@testable import UserListData
import UserListDomain

/// The import's own JSON reader must read exactly what Foundation's JSONDecoder reads into
/// `[UserDTO]`, and refuse what it refuses, naming the entry.
@Suite struct UserJSONArrayTests {
    static func both(_ text: String) -> (ours: [UserDTO]?, foundation: [UserDTO]?) {
        both(Data(text.utf8))
    }

    static func both(_ data: Data) -> (ours: [UserDTO]?, foundation: [UserDTO]?) {
        (try? UserJSONArray.decode(data), try? JSONDecoder().decode([UserDTO].self, from: data))
    }

    @Test func anExportReadsAsFoundationReadsIt() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("export.sqlite"))
        _ = try await store.importUsers(SampleUsers.generate(count: 2_000, seed: 31))
        let (ours, foundation) = Self.both(try store.exportJSON())
        #expect(ours != nil && ours == foundation && ours?.count == 2_000)
    }

    @Test func everyShapeJSONAllowsReadsTheSame() throws {
        let id1 = UUID(), id2 = UUID(), id3 = UUID()
        let text = """
             [ {"version" : -3 , "email":"a\\/b@x.org","full_name":"Q\\"uo\\\\te \\b\\f\\n\\r\\t \\u00e9\\u0301 \\ud83d\\udc19 山",
               "id":"\(id1.uuidString.lowercased())","avatar_url":null,
               "extra": {"nested": [1, -2.5e3, true, false, null, "s\\u0022", {"k": []}]}, "more": [] } ,
             {"\\u0069d":"\(id2.uuidString)","full_name":"","email":"","version":0},
             {"id":"\(id3.uuidString)","full_name":"Émile","email":"e@x.org","avatar_url":"https://a.example/x.png","version":9007199254740993}
            ]\n
            """
        let (ours, foundation) = Self.both(text)
        #expect(ours != nil)
        #expect(ours == foundation)
        #expect(ours?.first?.fullName == "Q\"uo\\te \u{8}\u{C}\n\r\t \u{E9}\u{301} 🐙 山")
        #expect(ours?[1].avatarURL == nil && ours?[2].version == 9_007_199_254_740_993)
        #expect(try UserJSONArray.decode(Data(" [ ] ".utf8)).isEmpty)
        // One trailing comma before a closing bracket, as Foundation allows.
        let trailing = #"[{"id":"\#(id1.uuidString)","full_name":"A","email":"a@x.org","version":1,"x":[1,{"y":2,},],},]"#
        #expect(Self.both(trailing).ours != nil && Self.both(trailing).ours == Self.both(trailing).foundation)
    }

    @Test func whatFoundationRefusesIsRefusedNamingTheEntry() throws {
        let good = #"{"id":"\#(UUID().uuidString)","full_name":"A","email":"a@x.org","version":1}"#
        let bad: [(String, String)] = [
            (#"{"users":[]}"#, "not an array"),
            ("[" + good + "," + #"{"full_name":"A","email":"a@x.org","version":1}"# + "]", "no id"),
            ("[" + good + "," + good.replacingOccurrences(of: #""id":""#, with: #""id":"x"#) + "]", "a bad id"),
            ("[" + good.replacingOccurrences(of: #""A""#, with: "\"A\u{1}\"") + "]", "a raw control byte"),
            ("[" + good.replacingOccurrences(of: #""A""#, with: #""\ud83d""#) + "]", "a lone surrogate"),
            ("[" + good.replacingOccurrences(of: #""A""#, with: #""\x""#) + "]", "an unknown escape"),
            ("[" + good.replacingOccurrences(of: #""version":1"#, with: #""version":"1""#) + "]", "a version as a string"),
            ("[" + good.replacingOccurrences(of: #""version":1"#, with: #""version":01"#) + "]", "a leading zero"),
            ("[" + good + ",,]", "two commas"),
            ("[" + good + "] x", "bytes after the array"),
            ("[" + good, "an unclosed array"),
            ("[" + good.dropLast(3), "a truncated entry"),
            ("[" + good.replacingOccurrences(of: #""email""#, with: #""email" "#).replacingOccurrences(of: ":\"a@", with: "\"a@") + "]", "no colon"),
        ]
        for (text, why) in bad {
            let (ours, foundation) = Self.both(text)
            #expect(foundation == nil, "Foundation accepts \(why)")
            #expect(ours == nil, "accepted \(why)")
        }
        var invalidUTF8 = Data(("[" + good).utf8)
        invalidUTF8.insert(contentsOf: [0xC3, 0x28], at: invalidUTF8.firstIndex(of: UInt8(ascii: "A"))!)
        invalidUTF8.append(UInt8(ascii: "]"))
        #expect(Self.both(invalidUTF8).foundation == nil)
        #expect(Self.both(invalidUTF8).ours == nil)

        do {
            _ = try UserJSONArray.decode(Data(("[" + good + "," + good + "," + #"{"id":"\#(UUID().uuidString)"}"# + "]").utf8))
            Issue.record("an entry without its other keys was accepted")
        } catch {
            #expect(error.entry == 3 && "\(error)".contains("entry 3") && "\(error)".contains("full_name"))
        }
    }
}
