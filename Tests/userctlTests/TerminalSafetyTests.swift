import Foundation
import Glibc
import Testing
import UserListClient
import UserListWire
@testable import userctl

/// Text from the daemon is made harmless before it reaches a terminal (issue 11, item 4): what
/// each human output path and `--json` produce for a name holding an escape sequence or a bidi
/// override.
@Suite struct TerminalSafetyTests {
    static let hostile = "Evil\u{1B}]0;PWNED\u{07}\u{1B}[2J \u{202E}txt.exe\u{9B}31m\u{7F}"

    static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { TerminalText.isUnsafe($0) && $0 != "\n" }
    }

    @Test func controlsAndBidiBecomeVisibleEscapes() {
        let shown = TerminalText.visible(Self.hostile)
        #expect(shown == #"Evil\x1b]0;PWNED\x07\x1b[2J \u202etxt.exe\x9b31m\x7f"#)
        #expect(TerminalText.visible(shown) == shown, "escaping twice changes nothing")
        #expect(TerminalText.visible("Zoë 山田 🐙") == "Zoë 山田 🐙", "ordinary text is untouched")
        for bidi: UInt32 in [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x2066, 0x2067, 0x2068, 0x2069] {
            #expect(!Self.hasControl(TerminalText.visible(String(Character(Unicode.Scalar(bidi)!)))), "U+\(String(bidi, radix: 16))")
        }
    }

    @Test func jsonOutputEscapesThemAsUnicodeEscapesAndReadsBackTheSame() throws {
        let user = UserRow(id: "1", name: Self.hostile, email: "e\u{202E}@x.org")
        let json = TerminalText.jsonSafe(user.json.description)
        #expect(!Self.hasControl(json), "\(json)")
        #expect(json.contains(#"\u202e"#) && json.contains(#"\u001b"#) && json.contains(#"\u009b"#))
        let back = try JSONValue(parsing: json)
        #expect(back["name"]?.stringValue == Self.hostile, "a JSON reader gets the stored name back")
    }

    @Test func exportLinesEscapeThemTooAndLeaveOtherLinesAsSerialized() throws {
        let hostile = UserRow(id: "1", name: Self.hostile, email: "e\u{202E}@x.org").json
        var line: [UInt8] = []
        hostile.serialize(into: &line)
        let safe = String(decoding: JSONLines.terminalSafe(line), as: UTF8.self)
        #expect(!Self.hasControl(safe), "\(safe)")
        #expect(try JSONValue(parsing: safe)["name"]?.stringValue == Self.hostile, "the export reads back the stored name")
        var plain: [UInt8] = []
        UserRow(id: "2", name: "Zoë Novák — 山田", email: "z@x.org").json.serialize(into: &plain)
        #expect(JSONLines.terminalSafe(plain) == plain, "a line with nothing unsafe is written as serialized")
    }

    /// An export passes the daemon's users through as they came: the file must be what
    /// parsing and serializing each gave (one user a line, hostile text escaped the same way),
    /// and a user spread over lines (not this daemon's JSON) still one line.
    @Test func exportLinesFromBytesAreTheLinesFromValues() throws {
        let users = [UserRow(id: "1", name: Self.hostile, email: "e\u{202E}@x.org").json,
                     UserRow(id: "2", name: "Zoë Novák — 山田 \"q\"", email: "z@x.org").json, ["id": "3", "avatar_url": nil]]
        let expected = "[\n" + (users + [users[0]]).map { value in
            var line: [UInt8] = [0x20, 0x20]
            value.serialize(into: &line)
            return String(decoding: JSONLines.terminalSafe(line), as: UTF8.self)
        }.joined(separator: ",\n") + "\n]\n"
        var page: [UInt8] = []
        JSONValue.array(users).serialize(into: &page)
        var compact: [UInt8] = []
        users[0].serialize(into: &compact)
        let spread = Array("{\n  ".utf8) + compact.dropFirst().dropLast() + Array("\n}".utf8)
        final class Sink { var bytes: [UInt8] = [] }
        let sink = Sink()
        var lines = JSONLines { sink.bytes += $0 }
        lines.append(try #require(try JSONSlice(validating: page).elements()))
        lines.append([try JSONSlice(validating: spread)])
        lines.close()
        #expect(String(decoding: sink.bytes, as: UTF8.self) == expected)
        #expect(!Self.hasControl(expected))

        let empty = Sink()
        var none = JSONLines { empty.bytes += $0 }
        none.append([])
        none.close()
        #expect(empty.bytes == Array("[]\n".utf8))
    }

    @Test func listShowAndErrorsShowTheNameEscaped() {
        let user = UserRow(id: "7", name: Self.hostile, email: "a\u{1B}[31m@b.org")
        let style = Style(enabled: true)
        for text in [Commands.tableText([user], style: style), Commands.userText(user, style: style)] {
            let rendered = Console.render(text)
            let withoutStyles = rendered.replacingOccurrences(of: #"\u{1B}\[[0-9]+m"#, with: "", options: .regularExpression)
            #expect(!Self.hasControl(withoutStyles), "only our own SGR styles reach the terminal: \(rendered.debugDescription)")
            #expect(rendered.contains(#"\x1b]0;PWNED\x07"#), "\(rendered)")
        }
        #expect(Console.render(Commands.userText(user, style: style)).contains(#"\u202etxt.exe"#))
        // The conflict error of `rename` quotes the other writer's stored name; stderr goes
        // through the same rendering.
        let error = Console.render("userctl: cannot rename 7: someone saved first (now named \"\(Self.hostile)\", version 2)")
        #expect(!Self.hasControl(error), "\(error.debugDescription)")
        #expect(error.contains(#"\x1b[2J"#))
        // A style marker smuggled in a name can switch bold at most: never a cursor move.
        #expect(!Console.render("x\u{F8F0}\u{F802}y").contains("\u{1B}[2J"))
    }

    @Test func theTUIDrawsNamesEscaped() {
        let drawn = FrameRenderer.draw(Line("  " + Self.hostile), width: 80)
        #expect(!Self.hasControl(drawn), "\(drawn.debugDescription)")
        #expect(drawn.contains(#"\u202e"#))
    }
}

/// Keys, pastes and mouse reports as the terminal sends them.
@Suite struct KeyDecodingTests {
    @Test func aBracketedPasteIsOnePieceEvenAcrossReads() {
        var decoder = KeyDecoder()
        let start = KeyDecoder.pasteStart, end = KeyDecoder.pasteEnd
        #expect(decoder.decode([0x6A] + start + Array("q x\u{1B}[A".utf8)) == [.character("j")], "inside a paste nothing is a key")
        #expect(decoder.decode(Array("more".utf8) + end.prefix(3)) == [])
        #expect(decoder.decode(Array(end.dropFirst(3)) + [0x6B]) == [.paste("q x\u{1B}[Amore"), .character("k")])
    }

    @Test func mouseReportsAndF1() {
        #expect(KeyDecoder.decode(Array("\u{1B}[<65;10;5M".utf8)) == [.mouse(.wheelDown)])
        #expect(KeyDecoder.decode(Array("\u{1B}[<64;10;5M".utf8)) == [.mouse(.wheelUp)])
        #expect(KeyDecoder.decode(Array("\u{1B}[<0;10;6M\u{1B}[<0;10;6m".utf8)) == [.mouse(.click(row: 5, column: 9))], "press selects, release is ignored")
        #expect(KeyDecoder.decode(Array("\u{1B}OP".utf8)) == [.f1])
        #expect(KeyDecoder.decode([0x15, 0x17]) == [.control("u"), .control("w")])
    }

    @Test func pastedTextBecomesOneLineOfName() {
        #expect(NameRules.pasted("Ada\nLovelace\t\u{1B}x") == "Ada Lovelace x")
        #expect(NameRules.deletingLastWord("Ada Lovelace  ") == "Ada ")
        #expect(NameRules.problem("   ") == "The name cannot be empty.")
        #expect(NameRules.problem(String(repeating: "a", count: 201)) == "The name is 201 characters long; at most 200 are allowed.")
        #expect(NameRules.problem("Ada") == nil)
    }

    @Test func searchHighlightIgnoresCaseAndAccents() {
        #expect(TUI.match("ya", in: "Yamada") == 0..<2)
        #expect(TUI.match("elo", in: "Zoë Élodie") == 4..<7)
        #expect(TUI.match("xyz", in: "Yamada") == nil)
    }
}

/// "Did you mean" for mistyped commands and options.
@Suite struct SuggestionTests {
    @Test func closeWordsAreSuggested() {
        let commands = Help.commands.map(\.name)
        #expect(Suggestions.closest(to: "lst", among: commands) == "list")
        #expect(Suggestions.closest(to: "renam", among: commands) == "rename")
        #expect(Suggestions.closest(to: "sesions", among: commands) == "sessions")
        #expect(Suggestions.closest(to: "stauts", among: commands) == "status")
        #expect(Suggestions.closest(to: "frobnicate", among: commands) == nil)
        #expect(Suggestions.closest(to: "nmae", among: ["name", "email", "avatar-url"]) == "name")
    }
}

/// The per-user runtime directory is used only when it is really the user's (issue 11, item 1).
@Suite struct RuntimeDirectoryTests {
    static func scratch() throws -> String {
        let path = "/tmp/ulct-rt-" + String(UUID().uuidString.prefix(8))
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }

    func failure(_ directory: RuntimeDirectory, uid: uid_t = getuid()) -> String? {
        do throws(CommandFailure) {
            try directory.prepare(uid: uid, create: true)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func aMissingFallbackIsCreatedPrivate() throws {
        let base = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let directory = RuntimeDirectory(path: base + "/userlistd-\(getuid())", fromEnvironment: false)
        #expect(failure(directory) == nil)
        var info = stat()
        #expect(lstat(directory.path, &info) == 0 && info.st_mode & 0o777 == 0o700 && info.st_uid == getuid())
        #expect(failure(directory) == nil, "and accepted the next time")
    }

    @Test func aMissingXDGRuntimeDirIsNotCreatedButExplained() throws {
        let path = "/tmp/ulct-rt-missing-" + String(UUID().uuidString.prefix(8))
        let message = try #require(failure(RuntimeDirectory(path: path, fromEnvironment: true)))
        #expect(message.contains("XDG_RUNTIME_DIR is \(path), which does not exist") && message.contains("mkdir -m 700"), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aPlantedSymlinkIsRefusedAndNotFollowed() throws {
        let base = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: base) }
        try FileManager.default.createDirectory(atPath: base + "/target", withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let planted = base + "/userlistd-\(getuid())"
        try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: base + "/target")
        let message = try #require(failure(RuntimeDirectory(path: planted, fromEnvironment: false)))
        #expect(message.contains("is a symbolic link") && message.contains("Fix:"), "\(message)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: base + "/target").isEmpty, "nothing was created through the link")
    }

    @Test func anOpenModeIsRefusedWithTheChmodToRun() throws {
        let base = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let path = base + "/userlistd-\(getuid())"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        chmod(path, 0o755)
        let message = try #require(failure(RuntimeDirectory(path: path, fromEnvironment: false)))
        #expect(message.contains("mode 755") && message.contains("chmod 700 \(path)"), "\(message)")
    }

    @Test(.enabled(if: getuid() == 0, "needs root to give a directory to another uid (chown nobody)"))
    func aDirectoryOwnedByAnotherUserIsRefused() throws {
        let base = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let path = base + "/userlistd-\(getuid())"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        chmod(path, 0o700)
        #expect(chown(path, 65534, 65534) == 0)
        let message = try #require(failure(RuntimeDirectory(path: path, fromEnvironment: false)))
        #expect(message.contains("belongs to uid 65534") && message.contains("not to you"), "\(message)")
    }
}

/// NO_COLOR (https://no-color.org) reaches the TUI too: search matches and errors are drawn
/// without colour, and with colour otherwise (issue 48 item 4).
@Suite struct NoColorTUITests {
    static let match = Line("Ada Lovelace", .plain, marks: [0..<3])

    @Test func searchMatchesAreUnderlinedYellowOnlyWithColour() {
        #expect(FrameRenderer.draw(Self.match, width: 20, colour: true).contains("\u{1B}[4;33m"))
        let plain = FrameRenderer.draw(Self.match, width: 20, colour: false)
        #expect(plain.contains("\u{1B}[4m") && !plain.contains("33m"), "underlined, no yellow: \(plain.debugDescription)")
    }

    @Test func errorsAreReverseVideoWithoutColour() {
        let error = Line("Undo refused", .error)
        #expect(FrameRenderer.draw(error, width: 20, colour: true).contains("41m"))
        let plain = FrameRenderer.draw(error, width: 20, colour: false)
        #expect(!plain.contains("41m") && !plain.contains("37;") && plain.contains("\u{1B}[1;7m"), "\(plain.debugDescription)")
    }
}
