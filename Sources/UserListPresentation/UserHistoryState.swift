import Foundation
import UserListDomain

/// Everything a user's history screen shows, as one value: entries newest first.
public struct UserHistoryState: Equatable, Codable, Sendable {
    public enum Loading: String, Equatable, Codable, Sendable { case none, firstPage, nextPage }

    public var userID: UUID
    public var entries: [HistoryEntry] = []
    public var loading: Loading = .none
    /// Older entries remain to be read.
    public var hasMore = false
    public var errorMessage: String?
    /// The entry a revert is in flight for.
    public var reverting: Int64?

    public init(userID: UUID) { self.userID = userID }
}

/// One-shot things the history screen tells its host.
public enum UserHistoryEvent: Equatable, Sendable {
    /// `entry` was undone; `user` is the user as the undo left them (nil: the undo removed them).
    case didRevert(entry: Int64, user: User?)
}
