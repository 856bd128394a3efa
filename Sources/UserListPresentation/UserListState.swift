import Foundation
import UserListDomain

/// Everything the user list screen shows, as one value: the daemon diffs it and sends the patch.
public struct UserListState: Equatable, Codable, Sendable {
    public enum Loading: String, Codable, Sendable {
        case none
        case fullScreen = "full_screen"
        case nextPage = "next_page"
        /// Rows before the first loaded one are coming (scrolling up from the list's end).
        case previousPage = "previous_page"
    }

    public var users: [User] = []
    public var loading: Loading = .none
    public var errorMessage: String?
    public var hasMore = false
    /// True when users come before the first loaded row: the rows are a window that does not
    /// start at the top (the list was opened at its end).
    public var hasPrevious = false
    public var totalCount: Int?
    /// The active search, or nil for everyone.
    public var search: String?
    /// True when the rows came from a cache because the source of truth was unreachable.
    public var isStale = false

    public init() {}
}

/// One-shot things the list screen tells its host; never part of the state.
public enum UserListEvent: Equatable, Sendable {
    case userSelected(id: UUID)
}
