/// The half-open text range `[lower, upper)` holding exactly the keys that start with a search
/// prefix, for a btree in the "C" collation (UTF-8 byte order, which is code-point order).
///
/// SQLite's `UserKey.prefixRange` increments the last byte, which may not be valid UTF-8;
/// PostgreSQL refuses invalid text, so here the last Unicode scalar is incremented instead
/// (skipping the surrogate gap). `upper` is `nil` when no string is greater (all U+10FFFF).
struct PostgresPrefixRange: Equatable {
    var lower: String
    var upper: String?

    /// `nil` for an empty prefix (no filter).
    init?(_ search: String) {
        let key = UserKey.fold(search)
        guard !key.isEmpty else { return nil }
        lower = key
        var scalars = Array(key.unicodeScalars)
        upper = nil
        while let last = scalars.popLast() {
            var next = last.value + 1
            if next == 0xD800 { next = 0xE000 }
            if let scalar = Unicode.Scalar(next) {
                scalars.append(scalar)
                var text = ""
                text.unicodeScalars.append(contentsOf: scalars)
                upper = text
                break
            }
        }
    }
}
