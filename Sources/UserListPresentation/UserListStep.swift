import UserListDomain

/// What applying one change did to a list (`UserListViewModel.apply`), as a value: a list in
/// the very state `before` that applies the same change reaches `after`, and, when the change
/// cut rows back to what the list loaded (`cut`), goes on loading from the same cursor.
///
/// A host that applies one change to many lists may keep the step and `replay` it on the
/// others in that state, which then skip the work (and share the rows' storage).
public struct UserListStep: Sendable {
    public let before: UserListState
    /// Whether the change was made elsewhere (it marks the list stale).
    public let markingStale: Bool
    public let after: UserListState
    let cut: Cut?

    /// Rows cut back to `capacity`, after which the list's next page starts at `next`.
    struct Cut: Sendable {
        let capacity: Int
        let next: PageCursor
    }
}

extension UserListState {
    /// Whether two states are the same value, told cheaply: the rows by storage identity (shared
    /// storage holds equal rows), every other field by value. Equal rows in separate storage
    /// count as different, which costs a caller that memoizes only a missed shortcut.
    public func isIdentical(to other: UserListState) -> Bool {
        guard users.count == other.users.count,
              users.withUnsafeBufferPointer({ mine in
                  other.users.withUnsafeBufferPointer { theirs in mine.baseAddress == theirs.baseAddress }
              })
        else { return false }
        return loading == other.loading && errorMessage == other.errorMessage && hasMore == other.hasMore
            && hasPrevious == other.hasPrevious && totalCount == other.totalCount && search == other.search
            && isStale == other.isStale
    }
}
