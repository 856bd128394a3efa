/// How much of the list a session had read, kept across a daemon restart. The rows themselves
/// are read again; a client that kept its place in them (a terminal scrolled to row 800) then
/// finds the same rows there, instead of a list cut back to its first page.
public struct UserListWindow: Codable, Equatable, Sendable {
    /// Rows that were loaded.
    public var rows: Int
    /// Read from the end (`showLastPage`) rather than from the first row.
    public var fromEnd: Bool

    public init(rows: Int, fromEnd: Bool) {
        self.rows = rows
        self.fromEnd = fromEnd
    }

    /// The window of `state`: its rows, and whether rows come before them.
    public init(of state: UserListState) {
        self.init(rows: state.users.count, fromEnd: state.hasPrevious)
    }

    /// Whether a restore of the two would read different pages (a row more or less within a
    /// page does not count: a restart reads whole pages).
    public func differsByAPage(from other: UserListWindow, pageSize: Int) -> Bool {
        fromEnd != other.fromEnd || (rows + pageSize - 1) / pageSize != (other.rows + pageSize - 1) / pageSize
    }
}
