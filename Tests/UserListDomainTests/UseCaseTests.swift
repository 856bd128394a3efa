import Foundation
import Testing
import UserListDomain

/// An in-memory repository that records what reached it, so a test can tell whether a rule
/// stopped a bad edit before any store saw it.
final class RecordingRepository: UserRepository, @unchecked Sendable {
    // Invariant: tests call this from one task at a time; the lock only guards against stray reads.
    private let lock = NSLock()
    private var users: [UUID: User] = [:]
    private(set) var updates: [User] = []
    private(set) var imports: [[User]] = []

    init(_ users: [User]) { for user in users { self.users[user.id] = user } }

    func fetchPage(_ request: PageRequest) async throws(UserError) -> UserPage {
        lock.withLock { UserPage(users: Array(users.values.prefix(request.limit)), next: nil) }
    }
    func fetchUser(id: UUID) async throws(UserError) -> User {
        guard let user = lock.withLock({ users[id] }) else { throw .notFound(id: id) }
        return user
    }
    func update(_ user: User) async throws(UserError) -> User {
        let outcome: Result<User, UserError> = lock.withLock {
            updates.append(user)
            guard let stored = users[user.id] else { return .failure(.notFound(id: user.id)) }
            guard stored.version == user.version else { return .failure(.conflict(stored: stored)) }
            // As the stores do: a save of what is stored writes nothing and returns it.
            if (stored.name, stored.email, stored.avatarURL) == (user.name, user.email, user.avatarURL) {
                return .success(stored)
            }
            var saved = user
            saved.version += 1
            users[user.id] = saved
            return .success(saved)
        }
        return try outcome.get()
    }
    func add(_ user: NewUser) async throws(UserError) -> User {
        let saved = User(id: user.id, name: user.name, email: user.email, avatarURL: user.avatarURL)
        lock.withLock { users[saved.id] = saved }
        return saved
    }
    func remove(id: UUID) async throws(UserError) {
        _ = lock.withLock { users.removeValue(forKey: id) }
    }
    func importUsers(_ users: [User]) async throws(UserError) -> Int {
        lock.withLock {
            imports.append(users)
            for user in users { self.users[user.id] = user }
        }
        return users.count
    }
}

let ada = User(id: UUID(), name: "Ada Lovelace", email: "ada@example.com", version: 3)

@Test func renameTrimsTheNameAndBumpsTheVersion() async throws {
    let repository = RecordingRepository([ada])
    let saved = try await UpdateUserUseCase(repository: repository).rename(ada, to: "  Ada King \n")
    #expect(saved.name == "Ada King")
    #expect(saved.version == 4)
}

@Test(arguments: ["", "   ", "\n\t"])
func blankNamesAreRejectedBeforeTheStore(name: String) async {
    let repository = RecordingRepository([ada])
    await #expect(throws: UserError.validation(field: .name, message: "The name cannot be empty.")) {
        _ = try await UpdateUserUseCase(repository: repository).rename(ada, to: name)
    }
    #expect(repository.updates.isEmpty)
}

@Test func namesLongerThan200CharactersAreRejected() async throws {
    let repository = RecordingRepository([ada])
    let ok = String(repeating: "é", count: 200)
    _ = try await UpdateUserUseCase(repository: repository).rename(ada, to: ok)
    do {
        _ = try await UpdateUserUseCase(repository: repository).rename(ada, to: ok + "x")
        Issue.record("a 201-character name was accepted")
    } catch {
        guard case .validation(.name, let message) = error else { Issue.record("\(error)"); return }
        #expect(message.contains("201"))
    }
}

@Test(arguments: ["ada", "ada@", "@example.com", "ada@example", "a da@example.com", "ada@.com", "a@b@c.com"])
func implausibleEmailsAreRejected(email: String) async {
    let repository = RecordingRepository([ada])
    var edited = ada
    edited.email = email
    do {
        _ = try await UpdateUserUseCase(repository: repository).execute(edited)
        Issue.record("\(email) was accepted")
    } catch {
        guard case .validation(.email, _) = error else { Issue.record("\(error)"); return }
    }
    #expect(repository.updates.isEmpty)
}

@Test func aStaleVersionIsAConflictCarryingTheStoredUser() async throws {
    let repository = RecordingRepository([ada])
    let useCase = UpdateUserUseCase(repository: repository)
    let first = try await useCase.rename(ada, to: "Countess")
    await #expect(throws: UserError.conflict(stored: first)) {
        _ = try await useCase.rename(ada, to: "Someone else")
    }
    #expect(UserError.conflict(stored: first).message.contains("Countess"))
}

@Test func searchIsTrimmedAndBlankSearchMeansEverything() async throws {
    final class Spy: UserRepository, @unchecked Sendable {
        var seen: [PageRequest] = []
        func fetchPage(_ request: PageRequest) async throws(UserError) -> UserPage {
            seen.append(request); return UserPage(users: [], next: nil)
        }
        func fetchUser(id: UUID) async throws(UserError) -> User { throw .notFound(id: id) }
        func update(_ user: User) async throws(UserError) -> User { user }
        func add(_ user: NewUser) async throws(UserError) -> User { throw .unavailable(reason: "") }
        func remove(id: UUID) async throws(UserError) {}
    }
    let spy = Spy()
    let useCase = FetchUserPageUseCase(repository: spy)
    _ = try await useCase.execute(search: "  ad ")
    _ = try await useCase.execute(search: "   ")
    _ = try await useCase.execute(limit: 1_000_000)
    #expect(spy.seen.map(\.search) == ["ad", nil, nil])
    #expect(spy.seen.last?.limit == FetchUserPageUseCase.maximumPageSize, "clamped to an export's largest page")
}

@Test func anImportNamingAUserTwiceWritesItOnceAsItsLastEntryHasIt() async throws {
    let repository = RecordingRepository([])
    let bob = User(id: UUID(), name: "Bob", email: "bob@example.com")
    var adaLater = ada
    adaLater.name = "Ada King"
    let written = try await ImportUsersUseCase(repository: repository).execute([ada, bob, adaLater])
    #expect(written == 2)
    #expect(repository.imports == [[bob, adaLater]])
}

@Test func anInvalidEarlierEntryOfARepeatedUserStillRefusesTheImport() async {
    let repository = RecordingRepository([])
    var bad = ada
    bad.email = "not an email"
    await #expect(throws: UserError.self) {
        _ = try await ImportUsersUseCase(repository: repository).execute([bad, ada])
    }
    #expect(repository.imports.isEmpty)
}

/// `userctl set` without a version: someone else's save between its read and its write (here,
/// of another field) is kept, and the set applied again over it, instead of a conflict.
@Test func aSetOvertakenByAnotherSaveKeepsTheirFieldsAndWritesItsOwn() async throws {
    let repository = RecordingRepository([ada])
    let useCase = UpdateUserUseCase(repository: repository)
    var theirs = ada
    theirs.avatarURL = "https://example.com/ada.png"
    let overtaking = try await useCase.execute(theirs)   // after our read of `ada`, before our write
    let (saved, changed) = try await useCase.set(UserEdit(name: "Countess"), over: ada)
    #expect(changed && saved.name == "Countess" && saved.avatarURL == overtaking.avatarURL)
    #expect(saved.version == overtaking.version + 1)
    #expect(repository.updates.count == 3, "theirs, ours refused at the old version, ours again")

    let again = try await useCase.set(UserEdit(name: "Countess"), over: ada)
    #expect(!again.changed && again.user == saved, "already stored: nothing written, the stored user back")
}

/// With no end of others' saves, the set gives up after a few tries with the conflict.
@Test func aSetThatKeepsLosingEndsInTheConflict() async throws {
    final class AlwaysNewer: UserRepository, @unchecked Sendable {
        var tries = 0
        func fetchPage(_ request: PageRequest) async throws(UserError) -> UserPage { UserPage(users: [], next: nil) }
        func fetchUser(id: UUID) async throws(UserError) -> User { ada }
        func update(_ user: User) async throws(UserError) -> User {
            tries += 1
            var newer = user
            newer.version += 1
            throw .conflict(stored: newer)
        }
        func add(_ user: NewUser) async throws(UserError) -> User { throw .unavailable(reason: "") }
        func remove(id: UUID) async throws(UserError) {}
    }
    let repository = AlwaysNewer()
    await #expect(throws: UserError.self) {
        _ = try await UpdateUserUseCase(repository: repository).set(UserEdit(name: "Countess"), over: ada)
    }
    #expect(repository.tries == 5)
    // A version named by the caller is checked once: its conflict is the answer.
    await #expect(throws: UserError.self) {
        _ = try await UpdateUserUseCase(repository: repository).set(UserEdit(name: "Countess"), over: ada, retrying: false)
    }
    #expect(repository.tries == 6)
}
