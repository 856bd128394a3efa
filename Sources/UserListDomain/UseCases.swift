import Foundation

/// Lists users a page at a time.
public struct FetchUserPageUseCase: Sendable {
    public static let defaultPageSize = 50
    /// The most users one forward page holds: an export's pages (a screen asks for 50).
    public static let maximumPageSize = 10_000
    private let repository: any UserRepository

    public init(repository: any UserRepository) { self.repository = repository }

    /// Where a list continues after `user` (see `UserRepository.cursor(after:totalCount:)`).
    public func cursor(after user: User, totalCount: Int?) -> PageCursor? {
        repository.cursor(after: user, totalCount: totalCount)
    }

    public func execute(after cursor: PageCursor? = nil, search: String? = nil,
                        limit: Int = defaultPageSize) async throws(UserError) -> UserPage {
        let trimmed = search?.trimmingCharacters(in: .whitespaces)
        let request = PageRequest(
            after: cursor, limit: max(1, min(limit, Self.maximumPageSize)),
            search: (trimmed?.isEmpty ?? true) ? nil : trimmed)
        return try await repository.fetchPage(request)
    }

    /// One page of an export (see `UserRepository.exportPage`): the same trimming and bounds as
    /// `execute(after:)`, read past any cache of screens' pages.
    public func exportPage(after cursor: PageCursor?, search: String?, limit: Int,
                           byteBudget: Int) async throws(UserError) -> UserPage {
        let trimmed = search?.trimmingCharacters(in: .whitespaces)
        let request = PageRequest(
            after: cursor, limit: max(1, min(limit, Self.maximumPageSize)),
            search: (trimmed?.isEmpty ?? true) ? nil : trimmed)
        return try await repository.exportPage(request, byteBudget: byteBudget)
    }

    /// The page right before `cursor` (a page's `previous`), or the last page when it is nil.
    public func execute(before cursor: PageCursor?, search: String? = nil,
                        limit: Int = defaultPageSize) async throws(UserError) -> UserPage {
        let trimmed = search?.trimmingCharacters(in: .whitespaces)
        let request = BackwardPageRequest(
            before: cursor, limit: max(1, min(limit, 1_000)),
            search: (trimmed?.isEmpty ?? true) ? nil : trimmed)
        return try await repository.fetchPage(request)
    }
}

/// Fetches one user by id.
public struct FetchUserUseCase: Sendable {
    private let repository: any UserRepository

    public init(repository: any UserRepository) { self.repository = repository }

    public func execute(id: UUID) async throws(UserError) -> User {
        try await repository.fetchUser(id: id)
    }
}

/// Renames or otherwise edits a user, enforcing the validation rules and optimistic concurrency:
/// `edited.version` must be the version the person was looking at.
public struct UpdateUserUseCase: Sendable {
    private let repository: any UserRepository
    /// Who saves, recorded in the history (nil: the store's plain write).
    public var author: ChangeAuthor?

    public init(repository: any UserRepository, author: ChangeAuthor? = nil) {
        self.repository = repository
        self.author = author
    }

    public func execute(_ edited: User) async throws(UserError) -> User {
        var user = edited
        user.name = try UserValidation.validName(edited.name)
        user.email = try UserValidation.validEmail(edited.email)
        user.avatarURL = try UserValidation.validAvatarURL(edited.avatarURL)
        if let author { return try await repository.update(user, by: author) }
        return try await repository.update(user)
    }

    /// Changes only the fields `edit` names over `stored` (`userctl set`). `changed` is false
    /// when every field was already stored (nothing written). `retrying` (no version named:
    /// whatever others save meanwhile): a save overtaken between the read and the write is
    /// applied again over what the other saved, since `edit` leaves their fields alone; a few
    /// tries, each after another's commit, then the conflict stands. Without it, `stored`'s
    /// version is checked once.
    public func set(_ edit: UserEdit, over stored: User,
                    retrying: Bool = true) async throws(UserError) -> (user: User, changed: Bool) {
        var base = stored, attempts = 1
        while true {
            do throws(UserError) {
                let saved = try await execute(edit.applied(to: base))
                return (saved, saved.version != base.version)
            } catch .conflict(let newer) where retrying && attempts < Self.setAttempts {
                base = newer
                attempts += 1
            }
        }
    }

    static let setAttempts = 5

    /// The common case: change the name only.
    public func rename(_ user: User, to newName: String) async throws(UserError) -> User {
        var edited = user
        edited.name = newName
        return try await execute(edited)
    }
}

/// Adds a user after validating it.
public struct AddUserUseCase: Sendable {
    private let repository: any UserRepository
    public var author: ChangeAuthor?

    public init(repository: any UserRepository, author: ChangeAuthor? = nil) {
        self.repository = repository
        self.author = author
    }

    public func execute(_ new: NewUser) async throws(UserError) -> User {
        var user = new
        user.name = try UserValidation.validName(new.name)
        user.email = try UserValidation.validEmail(new.email)
        user.avatarURL = try UserValidation.validAvatarURL(new.avatarURL)
        if let author { return try await repository.add(user, by: author) }
        return try await repository.add(user)
    }
}

/// Removes a user.
public struct RemoveUserUseCase: Sendable {
    private let repository: any UserRepository
    public var author: ChangeAuthor?

    public init(repository: any UserRepository, author: ChangeAuthor? = nil) {
        self.repository = repository
        self.author = author
    }

    public func execute(id: UUID) async throws(UserError) {
        if let author { return try await repository.remove(id: id, by: author) }
        try await repository.remove(id: id)
    }
}

/// Imports users (insert or replace by id) after validating every one, so a bad row stops the
/// import before anything is written. A user named twice is imported as its last entry has it,
/// written once, as a staged import does (otherwise each entry would be a write and a version).
public struct ImportUsersUseCase: Sendable {
    private let repository: any UserRepository
    public var author: ChangeAuthor?

    public init(repository: any UserRepository, author: ChangeAuthor? = nil) {
        self.repository = repository
        self.author = author
    }

    public func execute(_ users: [User]) async throws(UserError) -> Int {
        var valid: [User] = []
        valid.reserveCapacity(users.count)
        for (index, user) in users.enumerated() {
            var checked = user
            do throws(UserError) {
                checked.name = try UserValidation.validName(user.name)
                checked.email = try UserValidation.validEmail(user.email)
                checked.avatarURL = try UserValidation.validAvatarURL(user.avatarURL)
            } catch {
                guard case .validation(let field, let message) = error else { throw error }
                throw .validation(field: field,
                                  message: "User \(index + 1) (\(user.id.uuidString.lowercased())): \(message)")
            }
            valid.append(checked)
        }
        valid = Self.lastEntryOfEachUser(valid)
        if let author { return try await repository.importUsers(valid, by: author.via(.import)) }
        return try await repository.importUsers(valid)
    }

    /// `users` without the entries a later entry of the same id replaces, in file order.
    static func lastEntryOfEachUser(_ users: [User]) -> [User] {
        var last: [UUID: Int] = [:]
        last.reserveCapacity(users.count)
        for (index, user) in users.enumerated() { last[user.id] = index }
        guard last.count < users.count else { return users }
        return users.enumerated().compactMap { index, user in last[user.id] == index ? user : nil }
    }
}
