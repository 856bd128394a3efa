/// The one place where text from the daemon (names, emails, error messages) is made harmless
/// before it reaches a terminal.
///
/// A stored name can hold an escape sequence (`ESC ] 0 ; … BEL` retitles a terminal, `ESC [ 2 J`
/// clears it) or a bidi control (U+202E turns the rest of a line around). Human output shows each
/// such character as a visible escape (`\x1b`, `\u202e`), so what was stored is still readable;
/// JSON output writes them as `\uXXXX` escapes, which every JSON reader decodes back.
enum TerminalText {
    /// C0 controls, DEL, C1 controls, and the bidi controls (ALM, LRM, RLM, the embeddings and
    /// overrides, the isolates).
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x20 || (0x7F...0x9F).contains(v) { return true }
        switch v {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    static func needsEscaping(_ text: String) -> Bool { text.unicodeScalars.contains(where: isUnsafe) }

    /// `text` with every unsafe character shown as a visible escape: `\x1b` for C0, DEL and C1,
    /// `\u202e` for bidi controls. Idempotent (the escapes are plain ASCII).
    static func visible(_ text: String) -> String {
        guard needsEscaping(text) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar) else { out.unicodeScalars.append(scalar); continue }
            out += scalar.value <= 0xFF ? "\\x" + hex(scalar.value, digits: 2) : "\\u" + hex(scalar.value, digits: 4)
        }
        return out
    }

    /// Serialized JSON with every unsafe character written as `\uXXXX`. Such characters can only
    /// appear inside JSON strings (the serializer escapes C0 already), where `\uXXXX` means the
    /// same character, so the document reads back unchanged.
    static func jsonSafe(_ json: String) -> String {
        guard needsEscaping(json) else { return json }
        var out = ""
        for scalar in json.unicodeScalars {
            if isUnsafe(scalar) && scalar.value != 0x0A {
                out += "\\u" + hex(scalar.value, digits: 4)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
