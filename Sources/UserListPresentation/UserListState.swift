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

    /// Reads every field if present, so a state written before a field existed (a session
    /// journal from an older daemon) still restores.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        users = try container.decodeIfPresent([User].self, forKey: .users) ?? []
        loading = try container.decodeIfPresent(Loading.self, forKey: .loading) ?? .none
        errorMessage = try container.decodeIfPresent(String.self, forKey: .errorMessage)
        hasMore = try container.decodeIfPresent(Bool.self, forKey: .hasMore) ?? false
        hasPrevious = try container.decodeIfPresent(Bool.self, forKey: .hasPrevious) ?? false
        totalCount = try container.decodeIfPresent(Int.self, forKey: .totalCount)
        search = try container.decodeIfPresent(String.self, forKey: .search)
        isStale = try container.decodeIfPresent(Bool.self, forKey: .isStale) ?? false
    }
}

/// One-shot things the list screen tells its host; never part of the state.
public enum UserListEvent: Equatable, Sendable {
    case userSelected(id: UUID)
}
