import Testing
import Foundation
import UserListWire
@testable import userctl

@Suite struct DisplayWidthTests {
    @Test func asciiAndAccents() {
        #expect(DisplayWidth.of("Ann") == 3)
        #expect(DisplayWidth.of("José") == 4)
        #expect(DisplayWidth.of("Jose\u{0301}") == 4, "combining acute accent takes no column")
        #expect(DisplayWidth.of("Ångström") == 8)
    }

    @Test func cjkAndHangulAreTwoColumns() {
        #expect(DisplayWidth.of("山田太郎") == 8)
        #expect(DisplayWidth.of("김민준") == 6)
        #expect(DisplayWidth.of("ｆｕｌｌ") == 8, "fullwidth forms")
    }

    @Test func emojiAreTwoColumns() {
        #expect(DisplayWidth.of("😀") == 2)
        #expect(DisplayWidth.of("🤖x") == 3)
        #expect(DisplayWidth.of("👩‍💻") == 2, "a ZWJ sequence is one glyph")
        #expect(DisplayWidth.of("🇯🇵") == 2, "a flag is one glyph")
        #expect(DisplayWidth.of("❤️") == 2, "emoji presentation selector")
    }

    @Test func truncationNeverExceedsWidthAndEndsInEllipsis() {
        #expect(DisplayWidth.truncate("Alexander", to: 5) == "Alex…")
        #expect(DisplayWidth.truncate("Ann", to: 5) == "Ann")
        #expect(DisplayWidth.truncate("山田太郎", to: 5) == "山田…")
        #expect(DisplayWidth.of(DisplayWidth.truncate("山田太郎", to: 4)) <= 4)
        #expect(DisplayWidth.truncate("山田太郎", to: 4) == "山…")
        #expect(DisplayWidth.truncate("😀😀😀", to: 4) == "😀…")
        #expect(DisplayWidth.truncate("Jose\u{0301}phine", to: 5) == "Jose\u{0301}…")
        #expect(DisplayWidth.truncate("abc", to: 0) == "")
    }

    @Test func paddingLinesUpAcrossScripts() {
        for name in ["Ann", "山田太郎", "José", "Jose\u{0301}", "😀 Smile", "Bartholomew Featherstonehaugh"] {
            #expect(DisplayWidth.of(DisplayWidth.pad(name, to: 10)) == 10, "\(name)")
        }
    }

    @Test func controlCharactersAreNeutralised() {
        #expect(DisplayWidth.sanitized("a\u{1B}[31mb") == #"a\x1b[31mb"#, "shown as a visible escape")
    }
}

@Suite struct ArgumentsTests {
    func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
        try Arguments.parse(arguments, commands: Help.commands)
    }

    @Test func commandWithOptionsAndGlobalsAnywhere() throws {
        let invocation = try parse(["--socket", "/tmp/s", "list", "--page-size", "5", "--json", "--search=ann"])
        #expect(invocation.command == "list")
        #expect(invocation.values == ["socket": "/tmp/s", "page-size": "5", "search": "ann"])
        #expect(invocation.flags == ["json"])
    }

    @Test func positionals() throws {
        let invocation = try parse(["rename", "abc", "New Name"])
        #expect(invocation.positionals == ["abc", "New Name"])
        let dashed = try parse(["rename", "abc", "--", "--weird name"])
        #expect(dashed.positionals == ["abc", "--weird name"])
    }

    @Test func unknownOptionNamesItAndTheCommand() {
        #expect(throws: UsageError(message: "unknown option '--bogus' for 'userctl list'", command: "list")) {
            try parse(["list", "--bogus"])
        }
    }

    @Test func optionOfAnotherCommandIsUnknown() {
        #expect(throws: UsageError.self) { try parse(["show", "--all", "x"]) }
    }

    @Test func missingValue() {
        #expect(throws: UsageError(message: "option '--socket' needs a value (PATH)", command: nil)) {
            try parse(["--socket"])
        }
        #expect(throws: UsageError(message: "option '--search' needs a value (TEXT)", command: "list")) {
            try parse(["list", "--search", "--json"])
        }
    }

    @Test func unknownCommandSuggestsOrListsTheKnownOnes() {
        do {
            _ = try parse(["lsit"])
            Issue.record("parsed")
        } catch {
            #expect(error.message == "unknown command 'lsit'; did you mean 'list'?")
        }
        do {
            _ = try parse(["frobnicate"])
            Issue.record("parsed")
        } catch {
            #expect(error.message.hasPrefix("unknown command 'frobnicate'; commands: list, show"))
        }
    }

    @Test func wrongNumberOfArguments() {
        #expect(throws: UsageError(message: "'userctl rename' needs NAME", command: "rename")) { try parse(["rename", "id"]) }
        #expect(throws: UsageError.self) { try parse(["list", "extra"]) }
    }

    @Test func unknownSingleDashOptionsAreRejected() {
        #expect(throws: UsageError.self) { try parse(["list", "-x"]) }
        #expect(throws: UsageError.self) { try parse(["list", "-jx"]) }
    }

    @Test func flagsTakeNoValue() {
        #expect(throws: UsageError(message: "option '--json' takes no value", command: nil)) { try parse(["--json=yes"]) }
    }

    @Test func helpNeedsNoPositionals() throws {
        let invocation = try parse(["rename", "--help"])
        #expect(invocation.help && invocation.command == "rename")
    }

    @Test func pageSizeMustBePositive() throws {
        let invocation = try parse(["list", "--page-size", "zero"])
        #expect(throws: UsageError.self) { try Arguments.positiveInt(invocation, "page-size") }
    }

    @Test func keyDecoding() {
        #expect(KeyDecoder.decode([0x1B, 0x5B, 0x41, 0x6A, 0x0D]) == [.up, .character("j"), .enter])
        #expect(KeyDecoder.decode([0x1B]) == [.escape])
        #expect(KeyDecoder.decode([0x1B, 0x5B, 0x36, 0x7E]) == [.pageDown])
        #expect(KeyDecoder.decode([0x13, 0x7F]) == [.control("s"), .backspace])
        #expect(KeyDecoder.decode(Array("é山".utf8)) == [.character("é"), .character("山")])
    }

    @Test func rendererWritesOnlyChangedRows() {
        var renderer = FrameRenderer()
        _ = renderer.render([Line("a"), Line("b"), Line("c")], width: 10)
        let second = renderer.render([Line("a"), Line("B"), Line("c")], width: 10)
        #expect(second == "\u{1B}[2;1HB         ")
        #expect(renderer.render([Line("a"), Line("B"), Line("c")], width: 10) == "")
    }

    @Test func importAcceptsWireAndRestShapes() throws {
        let data = """
        [{"id":"a","name":"Ann","email":"a@x","avatar_url":null,"version":2},
         {"id":"b","full_name":"Bob","email":"b@x","avatar_url":"http://x/b.png"}]
        """
        let users = try Self.normalized(Data(data.utf8))
        #expect(users.map { $0["name"]?.stringValue } == ["Ann", "Bob"])
        #expect(users[1]["avatar_url"]?.stringValue == "http://x/b.png")
        #expect(throws: CommandFailure.self) { try Self.normalized(Data("[{}]".utf8)) }
    }

    /// An array's entries as `userctl import` stages them, one by one.
    private static func normalized(_ data: Data) throws -> [JSONValue] {
        let entries = try #require(try JSONValue(parsing: Array(data)).arrayValue)
        return try entries.enumerated().map { index, entry in try ImportFile.normalizeOne(entry, entry: index + 1, source: "t") }
    }

    /// A version it cannot read is refused, not dropped: dropping it would skip the conflict
    /// check the entry asks for.
    @Test func anImportEntrysVersionMustBeAWholeNumber() throws {
        let entry = { (version: String) in Data(#"[{"name":"Ann","email":"a@example.org","version":\#(version)}]"#.utf8) }
        #expect(try Self.normalized(entry("3"))[0]["version"] == .int(3))
        #expect(try Self.normalized(entry("null"))[0]["version"] == nil)
        for unreadable in [#""3""#, "2.5", "true", "[3]"] {
            #expect(throws: CommandFailure.self, "\(unreadable)") { try Self.normalized(entry(unreadable)) }
        }
    }
}
