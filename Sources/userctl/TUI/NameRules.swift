import Foundation

/// Why a draft name cannot be saved, said while the person types rather than after a refused
/// save. Mirrors the daemon's rules (UserValidation in the Domain: trimmed, not empty, at most
/// 200 characters, no control or bidi-control characters); the daemon stays the judge, and a
/// refusal it sends is shown as well.
enum NameRules {
    static let maximumLength = 200

    static func problem(_ draft: String) -> String? {
        let name = draft.trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty { return "The name cannot be empty." }
        if name.count > maximumLength {
            return "The name is \(name.count) characters long; at most \(maximumLength) are allowed."
        }
        if TerminalText.needsEscaping(name) { return "The name cannot contain control or bidi-control characters." }
        return nil
    }

    /// Pasted text as one line of a name: line breaks and tabs become spaces, other controls go.
    static func pasted(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\n" || scalar == "\r" || scalar == "\t" {
                if out.last != " " { out.append(" ") }
            } else if !TerminalText.isUnsafe(scalar) {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// `text` without its last word (and the spaces after it), as Ctrl-W does in a shell.
    static func deletingLastWord(_ text: String) -> String {
        var result = text
        while result.last == " " { result.removeLast() }
        while let last = result.last, last != " " { result.removeLast() }
        return result
    }
}
