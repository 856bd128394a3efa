import Foundation
import UserListDomain

/// Substring search over the folded name and email keys, in list order (`name_key`, `id`).
///
/// Semantics (the same as `TextKey.matches`, which the list ViewModel uses for live changes): a
/// user matches when the folded term occurs anywhere in the folded name or the folded email.
///
/// Plan, chosen per query:
/// - **Narrow** (the term has 3 or more characters and the trigram index holds at most
///   `candidateCap` candidates): the candidates' rows are read by rowid, checked with `instr`,
///   sorted and cut at the keyset. The count is exact (computed on the first page, carried in
///   the cursor).
/// - **Broad** (more candidates than that, or a term of 1 or 2 characters, which trigrams cannot
///   index): the `(name_key, id)` index is walked in order and each row checked with `instr`.
///   Matches are then dense (or the term is short and common), so a page is found after a short
///   walk. The cap balances the two: reading C candidates costs about C rows, walking to a page
///   of L matches about L·N/C rows (N users), equal at C = √(L·N), so the cap is that (at least
///   2,000): about 7,000 rows either way for a page of 50 at 1M users. The count is exact when
///   the store holds at most `broadCountLimit` users (a scan of that many keys is cheap); above,
///   it is not computed (`totalCount` nil, "unknown").
///
/// While the index has a backlog (after a bulk load, see `SQLiteSearchIndex`), the users past the
/// index's mark and those whose entry is stale count as candidates too: the narrow plan reads them
/// all, and a backlog bigger than the cap makes every search broad. The same answers either way,
/// for as long as the catch-up takes; only the counts of broad searches in a big store are left out
/// (nil).
struct SQLiteSearch {
    /// The folded term.
    let key: String
    /// The FTS5 query asking for every trigram of `key`, or nil when `key` is too short.
    let trigramQuery: String?
    /// The search index's mark when it has a backlog (`?6` of the queries).
    var indexedThrough: Int?

    static let minimumCandidateCap = 2_000

    /// The most candidates the narrow plan reads for a page of `limit` among `stored` users.
    static func candidateCap(limit: Int, stored: Int) -> Int {
        max(minimumCandidateCap, Int(Double(max(1, limit) * max(1, stored)).squareRoot()))
    }

    init?(_ text: String) {
        key = UserKey.fold(text)
        guard !key.isEmpty else { return nil }
        trigramQuery = Self.trigramQuery(key)
    }

    /// `"abc" AND "bcd" AND …` over the term's Unicode scalars (the trigram tokenizer's
    /// characters), each trigram once, quoted as FTS5 strings.
    static func trigramQuery(_ key: String) -> String? {
        let scalars = Array(key.unicodeScalars)
        guard scalars.count >= 3 else { return nil }
        var seen = Set<String>()
        var parts: [String] = []
        for start in 0...(scalars.count - 3) {
            var trigram = String.UnicodeScalarView()
            trigram.append(contentsOf: scalars[start..<start + 3])
            let text = String(trigram)
            guard seen.insert(text).inserted else { continue }
            parts.append("\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"")
        }
        return parts.joined(separator: " AND ")
    }

    /// How many index candidates the term has, up to `cap + 1`; nil when it has no trigram query.
    func candidateCount(_ connection: SQLiteConnection, cap: Int) throws(SQLiteError) -> Int? {
        guard let trigramQuery else { return nil }
        let statement = try connection.statement(
            "SELECT COUNT(*) FROM (SELECT rowid FROM users_search WHERE users_search MATCH ?1 LIMIT ?2)")
        defer { statement.reset() }
        statement.bind(1, trigramQuery)
        statement.bind(2, cap + 1)
        _ = try statement.step("searching users")
        return statement.int(0)
    }

    /// Whether the narrow plan applies to a page of `limit`: its candidates (the index's, and
    /// every user past the index's mark while it has a backlog) are few enough to read.
    func isNarrow(_ connection: SQLiteConnection, limit: Int) throws(SQLiteError) -> Bool {
        guard trigramQuery != nil else { return false }
        let stored = try connection.integer("SELECT user_count FROM store_state WHERE only = 1", "counting users")
        let cap = Self.candidateCap(limit: limit, stored: stored)
        var backlog = 0
        if let indexedThrough {
            backlog = try connection.integer("SELECT ifnull(max(rowid), 0) FROM users", "searching users")
                - indexedThrough
                + connection.integer("SELECT count(*) FROM search_stale", "searching users")
            guard backlog <= cap else { return false }
        }
        guard let count = try candidateCount(connection, cap: cap) else { return false }
        return count + backlog <= cap
    }

    static let match = "(instr(name_key, ?1) > 0 OR instr(email_key, ?1) > 0)"
    static let indexed = "rowid IN (SELECT rowid FROM users_search WHERE users_search MATCH ?2)"

    /// The users the narrow plan reads: the index's candidates, and the backlog if there is one
    /// (the users past the mark, and the stale entries' users).
    var candidates: String {
        indexedThrough == nil ? Self.indexed
            : "(\(Self.indexed) OR rowid > ?6 OR rowid IN (SELECT user_rowid FROM search_stale))"
    }

    /// The WHERE conditions of the page query (`?1` the key, `?2` the trigram query, `?6` the
    /// index's mark).
    func conditions(narrow: Bool) -> [String] {
        narrow ? [candidates, Self.match] : [Self.match]
    }

    /// Binds `?1`, `?2` and `?6` of `conditions`.
    func bind(_ statement: SQLiteStatement, narrow: Bool) {
        statement.bind(1, key)
        guard narrow, let trigramQuery else { return }
        statement.bind(2, trigramQuery)
        if let indexedThrough { statement.bind(6, indexedThrough) }
    }

    static let broadCountLimit = 50_000

    /// The exact number of matches by a scan, when the store is small enough; nil otherwise.
    func broadCount(_ connection: SQLiteConnection) throws(SQLiteError) -> Int? {
        let stored = try connection.integer("SELECT user_count FROM store_state WHERE only = 1", "counting users")
        guard stored <= Self.broadCountLimit else { return nil }
        let statement = try connection.statement("SELECT COUNT(*) FROM users WHERE \(Self.match)")
        defer { statement.reset() }
        statement.bind(1, key)
        _ = try statement.step("counting users")
        return statement.int(0)
    }

    /// The exact number of matches (narrow plan only: at most `candidateCap` rows are checked).
    func exactCount(_ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        let statement = try connection.statement(
            "SELECT COUNT(*) FROM users WHERE \(candidates) AND \(Self.match)")
        defer { statement.reset() }
        bind(statement, narrow: true)
        _ = try statement.step("counting users")
        return statement.int(0)
    }
}
