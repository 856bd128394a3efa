/// Terminal column widths, so names in any script line up and never wrap into the next row.
///
/// A compact version of wcwidth: East Asian Wide/Fullwidth and emoji take 2 columns, combining
/// marks, variation selectors and zero-width joiners 0, everything else printable 1. Measured per
/// grapheme cluster (what the terminal draws as one glyph): the widest scalar of the cluster, so
/// "e" + U+0301 is 1 and a flag or an emoji ZWJ sequence is 2.
enum DisplayWidth {
    static func of(_ scalar: Unicode.Scalar) -> Int {
        let v = scalar.value
        if v == 0 { return 0 }
        if v < 0x20 || (v >= 0x7F && v < 0xA0) { return 0 }  // control characters
        if isZeroWidth(v) { return 0 }
        if isWide(v) { return 2 }
        return 1
    }

    static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        // Emoji presentation selector turns a text-style symbol into a 2-column emoji.
        if scalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        // Regional indicator pairs (flags) are one 2-column glyph.
        if let first = scalars.first, (0x1F1E6...0x1F1FF).contains(first.value) { return 2 }
        return scalars.map { of($0) }.max() ?? 0
    }

    static func of(_ text: String) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    static func isZeroWidth(_ v: UInt32) -> Bool {
        switch v {
        case 0x0300...0x036F, 0x0483...0x0489, 0x0591...0x05BD, 0x0610...0x061A, 0x064B...0x065F,
             0x0E31, 0x0E34...0x0E3A, 0x0E47...0x0E4E, 0x1AB0...0x1AFF, 0x1DC0...0x1DFF,
             0x200B...0x200F, 0x202A...0x202E, 0x2060...0x2064, 0x20D0...0x20FF,
             0xFE00...0xFE0F, 0xFE20...0xFE2F, 0xFEFF, 0x1F3FB...0x1F3FF, 0xE0100...0xE01EF:
            true
        case 0x1160...0x11FF:  // Hangul jamo medial vowels and final consonants combine
            true
        default:
            false
        }
    }

    static func isWide(_ v: UInt32) -> Bool {
        switch v {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0, 0x23F3,
             0x25FD...0x25FE, 0x2614...0x2615, 0x2648...0x2653, 0x267F, 0x2693, 0x26A1, 0x26AA...0x26AB,
             0x26BD...0x26BE, 0x26C4...0x26C5, 0x26CE, 0x26D4, 0x26EA, 0x26F2...0x26F3, 0x26F5, 0x26FA,
             0x26FD, 0x2705, 0x270A...0x270B, 0x2728, 0x274C, 0x274E, 0x2753...0x2755, 0x2757,
             0x2795...0x2797, 0x27B0, 0x27BF, 0x2B1B...0x2B1C, 0x2B50, 0x2B55,
             0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
             0xFF00...0xFF60, 0xFFE0...0xFFE6,
             0x16FE0...0x16FE4, 0x17000...0x18AFF, 0x1B000...0x1B2FF, 0x1F004, 0x1F0CF, 0x1F18E,
             0x1F191...0x1F19A, 0x1F200...0x1F251, 0x1F300...0x1F64F, 0x1F680...0x1F6FF,
             0x1F7E0...0x1F7EB, 0x1F900...0x1F9FF, 0x1FA70...0x1FAFF, 0x20000...0x3FFFD:
            true
        default:
            false
        }
    }

    /// `text` cut to at most `width` columns, ending in "…" when cut. Never splits a grapheme,
    /// never returns more than `width` columns (a wide glyph that does not fit is dropped).
    static func truncate(_ text: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        if of(text) <= width { return text }
        var result = ""
        var used = 0
        for character in text {
            let w = of(character)
            if used + w > width - 1 { break }
            result.append(character)
            used += w
        }
        return result + "…"
    }

    /// `text` truncated and then padded with spaces to exactly `width` columns.
    static func pad(_ text: String, to width: Int) -> String {
        let cut = truncate(text, to: width)
        return cut + String(repeating: " ", count: max(0, width - of(cut)))
    }

    /// Unsafe characters shown as visible escapes (see `TerminalText`, the one place that decides).
    static func sanitized(_ text: String) -> String { TerminalText.visible(text) }
}
