import Foundation

/// The one text key every layer sorts and searches by: the SQLite store (`UserKey.fold`), the
/// PostgreSQL store, and the list ViewModel's live search matcher all call `TextKey.fold`, so a
/// name sorts and matches the same way whichever side looks at it.
///
/// The key is the NFKC form of the text, folded case-, accent- and width-insensitively with no
/// locale (Foundation's `folding(options:locale:)`):
/// - precomposed and decomposed forms are one key: "é" (U+00E9) and "e" + U+0301 both fold to "e";
/// - compatibility forms fold to their plain letters: "ﬁ" to "fi", full-width "Ｆ" to "f";
/// - German "ß" folds to "ss" (full case folding), so "Straße", "STRASSE" and "strasse" are one key;
/// - Turkish dotted "İ" (U+0130) folds to "i" (its dot is a combining mark, removed with the other
///   accents), like "I"; dotless "ı" (U+0131) stays "ı": without a locale there is no Turkish
///   rule, and a locale-dependent key would sort differently per daemon;
/// - CJK text has no case or accents and keeps its code points (sorted by UTF-8 bytes).
///
/// Keys are compared as UTF-8 bytes (SQLite's BINARY collation): a stable order, not a
/// linguistic one. A change to this function changes stored keys: the SQLite schema recomputes
/// them in a migration (see `SQLiteSchema`).
public enum TextKey {
    public static func fold(_ text: String) -> String {
        if let lowered = asciiLowered(text) { return String(decoding: lowered, as: UTF8.self) }
        return unicodeFold(text)
    }

    /// `fold(text)` as UTF-8 bytes, the form keys are compared in; ASCII text (most names) goes
    /// straight to bytes without making a String.
    public static func foldedUTF8(_ text: String) -> [UInt8] {
        asciiLowered(text) ?? Array(unicodeFold(text).utf8)
    }

    private static func unicodeFold(_ text: String) -> String {
        text.precomposedStringWithCompatibilityMapping
            .folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    /// The fast path of both (most names and nearly all emails): NFKC and accent/width folding
    /// are the identity on ASCII, so lowering A-Z is the whole key, at a fraction of the cost.
    /// Nil when `text` is not ASCII.
    private static func asciiLowered(_ text: String) -> [UInt8]? {
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        return text.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
    }
}

extension TextKey {
    /// The search rule every store and the list ViewModel share: `term` matches when its folded
    /// key occurs anywhere (a substring, not only a prefix) in the folded name or the folded
    /// email. Compared as UTF-8 bytes, as SQLite's `instr` on the stored keys does. An empty
    /// term matches everyone.
    public static func matches(_ term: String, name: String, email: String) -> Bool {
        let key = fold(term)
        guard !key.isEmpty else { return true }
        return containsKey(fold(name), key) || containsKey(fold(email), key)
    }

    /// Whether the folded `key` occurs in the folded `haystack`, byte-wise.
    public static func containsKey(_ haystack: String, _ key: String) -> Bool {
        let needle = Array(key.utf8)
        guard !needle.isEmpty else { return true }
        let bytes = Array(haystack.utf8)
        guard bytes.count >= needle.count else { return false }
        let first = needle[0]
        var start = 0
        while start <= bytes.count - needle.count {
            if bytes[start] == first, bytes[start..<(start + needle.count)].elementsEqual(needle) { return true }
            start += 1
        }
        return false
    }
}
