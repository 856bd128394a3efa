/// "Did you mean …?" for a mistyped command or option: the closest known word by edit
/// distance, when it is close enough to be a typo (at most 2 edits, and fewer than half the
/// word), or one that starts with what was typed.
enum Suggestions {
    static func closest(to typed: String, among candidates: [String]) -> String? {
        guard !typed.isEmpty else { return nil }
        if let prefixed = candidates.filter({ $0.hasPrefix(typed) }).min(by: { $0.count < $1.count }),
           typed.count >= 2 {
            return prefixed
        }
        let scored = candidates.map { ($0, distance(typed, $0)) }.filter { $0.1 <= min(2, max(1, typed.count / 2)) }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// Levenshtein distance with adjacent transpositions counted as one edit.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
