import Foundation
import UserListDomain

/// Users and their history in memory: every authored write records an entry, as the stores do.
final class InMemoryHistoryStore: UserRepository, UserHistoryRepository, @unchecked Sendable {
    // Invariant: every field is read and written under `lock`.
    private let lock = NSLock()
    private var users: [UUID: User] = [:]
    private(set) var entries: [HistoryEntry] = []

    init(_ users: [User]) { for user in users { self.users[user.id] = user } }

    private func record(_ kind: HistoryKind, _ id: UUID, before: User?, after: User?, _ author: ChangeAuthor) {
        entries.append(HistoryEntry(id: Int64(entries.count + 1), at: Date(), userID: id, kind: kind, author: author,
                                    before: before.map(UserFields.init), after: after.map(UserFields.init),
                                    versionAfter: after?.version))
    }

    func fetchPage(_ request: PageRequest) async throws(UserError) -> UserPage { UserPage(users: [], next: nil) }
    func fetchUser(id: UUID) async throws(UserError) -> User {
        guard let user = lock.withLock({ users[id] }) else { throw .notFound(id: id) }
        return user
    }
    func update(_ user: User) async throws(UserError) -> User { try await update(user, by: .unattributed) }
    func add(_ user: NewUser) async throws(UserError) -> User { try await add(user, by: .unattributed) }
    func remove(id: UUID) async throws(UserError) { try await remove(id: id, by: .unattributed) }

    func update(_ user: User, by author: ChangeAuthor) async throws(UserError) -> User {
        let outcome: Result<User, UserError> = lock.withLock {
            guard let stored = users[user.id] else { return .failure(.notFound(id: user.id)) }
            guard stored.version == user.version else { return .failure(.conflict(stored: stored)) }
            var saved = user
            saved.version += 1
            users[user.id] = saved
            record(.saved, user.id, before: stored, after: saved, author)
            return .success(saved)
        }
        return try outcome.get()
    }
    func add(_ new: NewUser, by author: ChangeAuthor) async throws(UserError) -> User {
        let outcome: Result<User, UserError> = lock.withLock {
            if let stored = users[new.id] { return .failure(.conflict(stored: stored)) }
            let user = User(id: new.id, name: new.name, email: new.email, avatarURL: new.avatarURL)
            users[user.id] = user
            record(.added, user.id, before: nil, after: user, author)
            return .success(user)
        }
        return try outcome.get()
    }
    func remove(id: UUID, by author: ChangeAuthor) async throws(UserError) {
        let outcome: Result<Void, UserError> = lock.withLock {
            guard let stored = users.removeValue(forKey: id) else { return .failure(.notFound(id: id)) }
            record(.removed, id, before: stored, after: nil, author)
            return .success(())
        }
        try outcome.get()
    }

    func history(_ query: HistoryQuery) async throws(UserError) -> HistoryPage {
        lock.withLock {
            let matching = entries.reversed().filter { entry in
                (query.userID.map { $0 == entry.userID } ?? true) && (query.actorUID.map { $0 == entry.author.uid } ?? true)
                    && (query.since.map { entry.at >= $0 } ?? true) && (query.before.map { entry.id < $0 } ?? true)
                    && (query.after.map { entry.id > $0 } ?? true)
            }
            let page = Array(matching.prefix(query.limit))
            return HistoryPage(entries: page, next: matching.count > query.limit ? page.last?.id : nil)
        }
    }
    func historyEntry(_ id: Int64) async throws(UserError) -> HistoryEntry {
        guard let entry = lock.withLock({ entries.first { $0.id == id } }) else {
            throw .noHistoryEntry(entry: id)
        }
        return entry
    }
    func pruneHistory(before cutoff: Date) async throws(UserError) -> Int {
        lock.withLock {
            let before = entries.count
            entries.removeAll { $0.at < cutoff }
            return before - entries.count
        }
    }
}
