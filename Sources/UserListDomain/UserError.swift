import Foundation

/// Everything that can go wrong with users, in words fit to show the person who asked.
public enum UserError: Error, Equatable, Sendable {
    public enum Field: String, Sendable, Codable { case name, email, avatarURL }

    case notFound(id: UUID)
    /// A history entry asked for by number (to show or revert) that is not kept: never
    /// recorded, or pruned by retention. Not a store failure: retrying cannot find it.
    case noHistoryEntry(entry: Int64)
    /// A revert of an entry whose change is undone already (the user is as it was before it):
    /// nothing to do, and retrying cannot change that. `reason` says what is stored.
    case alreadyUndone(entry: Int64, reason: String)
    /// The undo of import `entry` was refused: these users changed since the import (the first
    /// few; `count` is how many). Undoing it anyway leaves them as they are.
    case changedSinceImport(entry: Int64, ids: [UUID], count: Int)
    /// Someone else saved first: `stored` is what is in the store now.
    case conflict(stored: User)
    /// Another user (`other`) already has this email address, compared case-insensitively
    /// (`TextKey`). On the wire it is a `validation` error (retrying cannot help), naming the other user.
    case duplicateEmail(email: String, other: User)
    case validation(field: Field, message: String)
    /// The store cannot be reached or cannot write (disk full, read-only, upstream down).
    case unavailable(reason: String)
    /// The store failed while applying an import it had already taken whole (committed): the
    /// daemon keeps it and applies it itself once the store is back, so sending it again would
    /// be wrong. On the wire an `unavailable` error marked `kept`.
    case importKept(reason: String)
    /// The caller may look but not change.
    case forbidden(reason: String)
    /// An import entry that cannot be applied (invalid, an email another user has, or naming an
    /// older version than the stored one): the whole import was refused. `position` is the
    /// entry's place in the file (1-based), `reason` what is wrong with it.
    case rejectedEntry(position: Int, id: UUID, reason: String)

    public var message: String {
        switch self {
        case .notFound:
            "That user no longer exists."
        case .noHistoryEntry(let entry):
            "There is no history entry \(entry) (never recorded, or older than the history kept)."
        case .alreadyUndone(let entry, let reason):
            "Entry \(entry) is already undone: \(reason)"
        case .changedSinceImport(let entry, let ids, let count):
            Self.importNotUndone(entry, count: count, users: ids.map(UUIDText.lowercase))
        case .conflict(let stored):
            "Someone else saved this user first; the stored name is now “\(stored.name)”."
        case .duplicateEmail(let email, let other):
            "The email address “\(email)” is already used by “\(other.name)” "
                + "(id \(other.id.uuidString.lowercased())); each user needs an address of their own."
        case .validation(_, let message):
            message
        case .unavailable(let reason), .importKept(let reason):
            "The user store is unavailable: \(reason)"
        case .forbidden(let reason):
            reason
        case .rejectedEntry(let position, let id, let reason):
            "Entry \(position) (id \(id.uuidString.lowercased())): \(reason)"
        }
    }
}

extension UserError {
    /// `changedSinceImport`'s message, with `users` (the first few of `count`) told as the
    /// caller can: ids here, a daemon adds who changed each and when.
    public static func importNotUndone(_ entry: Int64, count: Int, users: [String]) -> String {
        "Entry \(entry) was not undone: \(count) user\(count == 1 ? "" : "s") changed since the import ("
            + users.joined(separator: "; ")
            + (count > users.count ? ", …" : "")
            + "); nothing was changed. --force-skip-changed leaves them as they are and undoes the rest."
    }
}

extension UserError: LocalizedError {
    public var errorDescription: String? { message }
}
