import Foundation

/// Reads history, newest first: one user's, or everyone's filtered by actor and time.
///
/// Entries come back as `daemon` sees them: a change another daemon on the same store made
/// reads as `via: .anotherDaemon` (`HistoryEntry.via(seenFrom:)`).
public struct FetchHistoryUseCase: Sendable {
    public static let defaultPageSize = 50
    private let repository: any UserHistoryRepository
    private let daemon: String?

    public init(repository: any UserHistoryRepository, seenFrom daemon: String? = nil) {
        self.repository = repository
        self.daemon = daemon
    }

    /// A page of `userID`'s history, continuing below `before`.
    public func user(_ userID: UUID, before: Int64? = nil,
                     limit: Int = defaultPageSize) async throws(UserError) -> HistoryPage {
        try await read(HistoryQuery(userID: userID, before: before, limit: Self.clamped(limit)))
    }

    /// `userID`'s entries newer than `entry`, newest first: what a screen showing the history
    /// has not seen yet.
    public func user(_ userID: UUID, newerThan entry: Int64?,
                     limit: Int = defaultPageSize) async throws(UserError) -> HistoryPage {
        try await read(HistoryQuery(userID: userID, after: entry, limit: Self.clamped(limit)))
    }

    /// A page of every user's history, optionally only `actorUID`'s changes and only since `since`.
    public func all(actorUID: UInt32? = nil, since: Date? = nil, before: Int64? = nil,
                    limit: Int = defaultPageSize) async throws(UserError) -> HistoryPage {
        try await read(HistoryQuery(actorUID: actorUID, since: since, before: before, limit: Self.clamped(limit)))
    }

    /// Any combination of filters (`userctl history ID --by USER --since TIME --kind K --via V`),
    /// as this daemon sees them; `counting`: with how many more match below the page.
    public func page(_ query: HistoryQuery, counting: Bool = false) async throws(UserError) -> HistoryPage {
        var clamped = query
        clamped.limit = Self.clamped(query.limit)
        clamped.seenFrom = daemon
        var page = try await read(clamped)
        if counting {
            page.more = 0
            if let next = page.next { page.more = try await repository.historyCount(clamped, below: next) }
        }
        return page
    }

    public func entry(_ id: Int64) async throws(UserError) -> HistoryEntry {
        seen(try await repository.historyEntry(id))
    }

    private func read(_ query: HistoryQuery) async throws(UserError) -> HistoryPage {
        var page = try await repository.history(query)
        if daemon != nil { page.entries = page.entries.map(seen) }
        return page
    }

    private func seen(_ entry: HistoryEntry) -> HistoryEntry {
        var seen = entry
        seen.author.via = entry.via(seenFrom: daemon)
        return seen
    }

    static func clamped(_ limit: Int) -> Int { max(1, min(limit, 1_000)) }
}

/// Undoes one history entry by applying its inverse as an ordinary write with the version
/// check: a user changed since the entry is a `.conflict` carrying what is stored now, as any
/// save. An entry whose change is undone already (the user is as it was before it, or the user
/// it added is gone) is `.alreadyUndone`: reverting twice is not a conflict, nothing to retry.
/// The revert is recorded as its own entry (`ChangeAuthor.reverting`). An import is undone
/// whole, in one transaction of the store (`undoImport`), never one user at a time.
public struct RevertHistoryEntryUseCase: Sendable {
    private let history: any UserHistoryRepository
    private let users: any UserRepository
    public var author: ChangeAuthor

    public init(history: any UserHistoryRepository, users: any UserRepository, author: ChangeAuthor) {
        self.history = history
        self.users = users
        self.author = author
    }

    /// Returns the user as the revert left it, or nil when the revert removed it (undoing an add).
    @discardableResult
    public func execute(entry id: Int64) async throws(UserError) -> User? {
        let entry = try await history.historyEntry(id)
        var author = author
        author.reverting = entry.id
        guard entry.kind != .imported, let userID = entry.userID else {
            throw .validation(field: .name,
                              message: "Entry \(id) is an import: it is undone whole (userctl revert \(id)).")
        }
        switch entry.kind {
        case .saved:
            guard let before = entry.before, let version = entry.versionAfter else {
                throw .unavailable(reason: "history entry \(id) does not say what the user was before")
            }
            var user = try await users.fetchUser(id: userID)
            if UserFields(user) == before {
                throw .alreadyUndone(entry: id,
                                     reason: "\"\(user.name)\" is as it was before it (version \(user.version))")
            }
            guard user.version == version else { throw .conflict(stored: user) }
            user.name = before.name
            user.email = before.email
            user.avatarURL = before.avatarURL
            return try await UpdateUserUseCase(repository: users, author: author).execute(user)
        case .added:
            let user: User
            do throws(UserError) {
                user = try await users.fetchUser(id: userID)
            } catch .notFound {
                throw .alreadyUndone(entry: id, reason: "the user it added no longer exists")
            }
            guard user.version == entry.versionAfter else { throw .conflict(stored: user) }
            try await users.remove(id: userID, by: author)
            return nil
        case .removed:
            guard let before = entry.before else {
                throw .unavailable(reason: "history entry \(id) does not say what the removed user was")
            }
            if let stored = try? await users.fetchUser(id: userID), UserFields(stored) == before {
                throw .alreadyUndone(entry: id, reason: "\"\(stored.name)\" is back (version \(stored.version))")
            }
            let new = NewUser(id: userID, name: before.name, email: before.email, avatarURL: before.avatarURL)
            return try await AddUserUseCase(repository: users, author: author).execute(new)
        case .imported:
            throw .unavailable(reason: "history entry \(id) is an import")  // (refused above)
        }
    }

    /// Undoes import `entry` whole (`UserHistoryRepository.revertImport`): refused, changing
    /// nothing, when users changed since it, unless `skippingChanged` leaves those as they are.
    /// An import undone already is `.alreadyUndone`; an entry that is no import is refused.
    public func undoImport(entry id: Int64, skippingChanged: Bool) async throws(UserError) -> ImportUndo {
        let entry = try await history.historyEntry(id)
        if entry.kind == .imported, let undone = entry.author.reverting {
            throw .validation(field: .name, message: "Entry \(id) undid import \(undone), and an undo of an import "
                + "is not undone in turn: to bring its users back, import the file again.")
        }
        guard entry.kind == .imported else {
            throw .validation(field: .name,
                              message: "Entry \(id) is no import; revert it without --force-skip-changed.")
        }
        var author = author
        author.reverting = id
        author.source = entry.batch?.source
        return try await history.revertImport(id, skippingChanged: skippingChanged, by: author)
    }
}
