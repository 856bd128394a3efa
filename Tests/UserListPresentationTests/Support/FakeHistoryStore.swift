import Foundation
import UserListDomain
import ThreadLocks

/// Users and their history in memory, for the history screen's tests: each write by an author
/// records an entry, as the stores do. `failNextHistoryRead(with:)` makes the next history read
/// throw; `historyReads` counts reads (a test can tell that a change to another user read nothing).
final class FakeHistoryStore: UserRepository, UserHistoryRepository {
    private struct State {
        var users: [UUID: User] = [:]
        var entries: [HistoryEntry] = []
        var failure: UserError?
        var historyReads = 0
    }
    private let state = Lock(State())
    private let clock: @Sendable () -> Date

    init(_ users: [User], clock: @escaping @Sendable () -> Date = { Date(timeIntervalSince1970: 1_800_000_000) }) {
        self.clock = clock
        state.withLock { s in for user in users { s.users[user.id] = user } }
    }

    var historyReads: Int { state.withLock { $0.historyReads } }
    func stored(_ id: UUID) -> User? { state.withLock { $0.users[id] } }
    func failNextHistoryRead(with error: UserError) { state.withLock { $0.failure = error } }

    private static func record(_ s: inout State, _ kind: HistoryKind, _ id: UUID, _ before: User?, _ after: User?,
                               _ author: ChangeAuthor, at: Date) {
        s.entries.append(HistoryEntry(id: Int64(s.entries.count + 1), at: at, userID: id, kind: kind, author: author,
                                      before: before.map(UserFields.init), after: after.map(UserFields.init),
                                      versionAfter: after?.version))
    }

    func fetchPage(_ request: PageRequest) async throws(UserError) -> UserPage { UserPage(users: [], next: nil) }
    func fetchUser(id: UUID) async throws(UserError) -> User {
        guard let user = state.withLock({ $0.users[id] }) else { throw .notFound(id: id) }
        return user
    }
    func update(_ user: User) async throws(UserError) -> User { try await update(user, by: .unattributed) }
    func add(_ user: NewUser) async throws(UserError) -> User { try await add(user, by: .unattributed) }
    func remove(id: UUID) async throws(UserError) { try await remove(id: id, by: .unattributed) }

    func update(_ user: User, by author: ChangeAuthor) async throws(UserError) -> User {
        let now = clock()
        return try state.withLock { s throws(UserError) -> User in
            guard let stored = s.users[user.id] else { throw .notFound(id: user.id) }
            guard stored.version == user.version else { throw .conflict(stored: stored) }
            var saved = user
            saved.version += 1
            s.users[user.id] = saved
            Self.record(&s, .saved, user.id, stored, saved, author, at: now)
            return saved
        }
    }
    func add(_ new: NewUser, by author: ChangeAuthor) async throws(UserError) -> User {
        let now = clock()
        return try state.withLock { s throws(UserError) -> User in
            if let stored = s.users[new.id] { throw .conflict(stored: stored) }
            let earlier = s.entries.filter { $0.userID == new.id }.compactMap(\.versionAfter).max() ?? 0
            let user = User(id: new.id, name: new.name, email: new.email, avatarURL: new.avatarURL, version: earlier + 1)
            s.users[user.id] = user
            Self.record(&s, .added, user.id, nil, user, author, at: now)
            return user
        }
    }
    func remove(id: UUID, by author: ChangeAuthor) async throws(UserError) {
        let now = clock()
        try state.withLock { s throws(UserError) in
            guard let stored = s.users.removeValue(forKey: id) else { throw .notFound(id: id) }
            Self.record(&s, .removed, id, stored, nil, author, at: now)
        }
    }

    func history(_ query: HistoryQuery) async throws(UserError) -> HistoryPage {
        try state.withLock { s throws(UserError) -> HistoryPage in
            s.historyReads += 1
            if let failure = s.failure {
                s.failure = nil
                throw failure
            }
            let matching = s.entries.reversed().filter { entry in
                (query.userID.map { $0 == entry.userID } ?? true) && (query.actorUID.map { $0 == entry.author.uid } ?? true)
                    && (query.before.map { entry.id < $0 } ?? true) && (query.after.map { entry.id > $0 } ?? true)
            }
            let page = Array(matching.prefix(query.limit))
            return HistoryPage(entries: page, next: matching.count > query.limit ? page.last?.id : nil)
        }
    }
    func historyEntry(_ id: Int64) async throws(UserError) -> HistoryEntry {
        guard let entry = state.withLock({ s in s.entries.first { $0.id == id } }) else {
            throw .noHistoryEntry(entry: id)
        }
        return entry
    }
    func pruneHistory(before cutoff: Date) async throws(UserError) -> Int { 0 }
}
