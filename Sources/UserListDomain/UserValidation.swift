import Foundation

/// The rules a user's editable fields must meet before any store sees them.
///
/// Every limit holds in bytes as well as in characters, so the largest possible user has a known
/// size and a session's state (a page of users plus a detail screen) fits in one wire frame by
/// construction (see SECURITY.md, "Limits").
public enum UserValidation {
    /// Characters (grapheme clusters) in a name.
    public static let maximumNameLength = 200
    /// UTF-8 bytes in a name: 200 characters of up to four bytes each.
    public static let maximumNameBytes = 800
    /// Unicode scalars in one character of a name or email. A base letter with a few accents, or
    /// the longest emoji ZWJ sequence (10 scalars), fits; "!" followed by 450,000 combining
    /// accents (one character of 900 KB) does not.
    public static let maximumScalarsPerCharacter = 12
    /// Characters in an email address (RFC 5321's path limit).
    public static let maximumEmailLength = 254
    /// UTF-8 bytes in an email address.
    public static let maximumEmailBytes = 320
    /// UTF-8 bytes in an avatar URL.
    public static let maximumAvatarURLBytes = 2048

    /// Returns the name as it will be stored (trimmed), or throws a validation error.
    public static func validName(_ raw: String) throws(UserError) -> String {
        let name = trimmed(raw)
        guard !name.isEmpty else {
            throw .validation(field: .name, message: "The name cannot be empty.")
        }
        try checkSize(name, field: .name, what: "name", characters: maximumNameLength, bytes: maximumNameBytes)
        try checkNoControls(name, field: .name, what: "name")
        return name
    }

    /// Plausible, not RFC 5322: one "@", something before it, a dotted domain after it, no spaces.
    public static func validEmail(_ raw: String) throws(UserError) -> String {
        let email = trimmed(raw)
        return isPlainASCIIEmail(email) ? email : try checkedEmail(email)
    }

    /// `validEmail`'s rules one by one, for any text, with the reason when one fails.
    static func checkedEmail(_ email: String) throws(UserError) -> String {
        try checkSize(email, field: .email, what: "email address", characters: maximumEmailLength,
                      bytes: maximumEmailBytes)
        try checkNoControls(email, field: .email, what: "email address")
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        let plausible = parts.count == 2
            && !parts[0].isEmpty
            && parts[1].contains(".")
            && !parts[1].hasPrefix(".") && !parts[1].hasSuffix(".")
            && !containsWhitespace(email)
        guard plausible else {
            throw .validation(field: .email, message: "“\(email)” does not look like an email address.")
        }
        return email
    }

    /// An avatar URL must be an absolute http or https URL with a host; empty means none.
    /// Returns it trimmed, or nil when there is none.
    public static func validAvatarURL(_ raw: String?) throws(UserError) -> String? {
        guard let raw else { return nil }
        let text = trimmed(raw)
        if text.isEmpty { return nil }
        guard text.utf8.count <= maximumAvatarURLBytes else {
            throw .validation(field: .avatarURL, message: "The avatar URL is \(text.utf8.count) bytes long; "
                              + "at most \(maximumAvatarURLBytes) are allowed.")
        }
        try checkNoControls(text, field: .avatarURL, what: "avatar URL")
        guard !containsWhitespace(text),
              let components = URLComponents(string: text),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty
        else {
            throw .validation(field: .avatarURL, message: "The avatar URL must be an absolute http:// or https:// URL, "
                              + "such as https://example.com/a.png.")
        }
        return text
    }

    /// The rules of `validEmail` for an ASCII address, in one pass over its bytes: true only
    /// when they all hold (anything else takes the full path, which says what is wrong). An
    /// import checks a million addresses; this is about ten times faster than the full path.
    static func isPlainASCIIEmail(_ email: String) -> Bool {
        var count = 0, at = -1, lastDot = -1, firstDomainDot = -1
        for byte in email.utf8 {
            // Controls, DEL, space, and anything not ASCII.
            guard byte > 0x20, byte < 0x7F else { return false }
            if byte == UInt8(ascii: "@") {
                guard at < 0 else { return false }
                at = count
            } else if byte == UInt8(ascii: "."), at >= 0 {
                if firstDomainDot < 0 { firstDomainDot = count }
                lastDot = count
            }
            count += 1
        }
        return count <= maximumEmailLength && at > 0 && firstDomainDot > at + 1 && lastDot < count - 1
    }

    private static func checkSize(_ text: String, field: UserError.Field, what: String,
                                  characters: Int, bytes: Int) throws(UserError) {
        // Bytes first: cheap, and it bounds the cost of counting characters below.
        let byteCount = text.utf8.count
        guard byteCount <= bytes else {
            throw .validation(field: field,
                              message: "The \(what) is \(byteCount) bytes long; at most \(bytes) are allowed.")
        }
        // ASCII: a character is one byte (two for CR LF, which `checkNoControls` refuses), so
        // few enough bytes means few enough characters, each of at most two scalars.
        if byteCount <= characters, isASCII(text) { return }
        var count = 0
        for character in text {
            count += 1
            guard character.unicodeScalars.count <= maximumScalarsPerCharacter else {
                throw .validation(
                    field: field,
                    message: "The \(what) has a character made of \(character.unicodeScalars.count) code points "
                        + "(a letter with too many accents); at most \(maximumScalarsPerCharacter) are allowed.")
            }
        }
        guard count <= characters else {
            throw .validation(field: field,
                              message: "The \(what) is \(count) characters long; at most \(characters) are allowed.")
        }
    }

    /// The text without leading and trailing white space, as Foundation's
    /// `.whitespacesAndNewlines` trims it (Unicode White_Space, and U+200B ZERO WIDTH SPACE),
    /// without a copy when there is none: an import validates millions of fields, nearly all
    /// already trimmed. (Public for screens that check a draft as it is typed.)
    public static func trimmed(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.first, let last = scalars.last else { return text }
        if !isTrimmed(first) && !isTrimmed(last) { return text }
        guard let start = scalars.firstIndex(where: { !isTrimmed($0) }),
              let end = scalars.lastIndex(where: { !isTrimmed($0) }) else { return "" }
        return String(scalars[start...end])
    }

    private static func isTrimmed(_ scalar: Unicode.Scalar) -> Bool {
        isWhitespace(scalar) || scalar.value == 0x200B
    }

    /// Unicode White_Space anywhere (as `Character.isWhitespace` sees it).
    static func containsWhitespace(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: isWhitespace)
    }

    private static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII ? scalar == " " || (0x09...0x0D).contains(scalar.value) : scalar.properties.isWhitespace
    }

    private static func isASCII(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 < 0x80 }
    }

    private static func checkNoControls(_ text: String, field: UserError.Field, what: String) throws(UserError) {
        guard let bad = text.unicodeScalars.first(where: isForbidden) else { return }
        let code = "U+" + String(bad.value, radix: 16, uppercase: true).leftPadded(to: 4)
        let kind = isBidiControl(bad) ? "a text-direction control character" : "a control character"
        throw .validation(field: field, message: "The \(what) contains \(kind) (\(code)); remove it.")
    }

    /// C0 controls (tab, newline, ESC...), DEL, C1 controls, and the bidirectional controls that
    /// reorder how a terminal shows the text around them.
    public static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (0x7F...0x9F).contains(value) || isBidiControl(scalar)
    }

    static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: true
        default: false
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
