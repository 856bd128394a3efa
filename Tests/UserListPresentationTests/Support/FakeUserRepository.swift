import Foundation
import Testing
import UserListTestSupport
import UserListDomain
import ThreadLocks

/// An in-memory store for ViewModel tests.
///
/// - Pages users in the store's order (name case-insensitively, then id) with an opaque cursor.
/// - `failNext(_:with:)` makes the next calls throw a chosen `UserError`.
/// - `hold(_:)` parks calls of a kind at a gate until the test releases them, so a test can look
///   at the in-flight state and choose the order in which responses arrive.
///
/// A call computes its answer when it arrives (the store commits at once) and is only *delivered*
/// when released: a held `update` has already changed the store, a held `fetchPage` answers with
/// the rows as they were when it was asked. Held calls ignore cancellation, like a reply already
/// on the wire.
final class FakeUserRepository: UserRepository {
    enum Method: Hashable, Sendable { case fetchPage, fetchUser, update, add, remove }

    enum Call: Equatable, Sendable {
        case fetchPage(PageRequest)
        /// A backward page (held and failed as `.fetchPage`).
        case fetchPageBackward(BackwardPageRequest)
        case fetchUser(UUID)
        case update(User)
        case add(NewUser)
        case remove(UUID)

        var method: Method {
            switch self {
            case .fetchPage, .fetchPageBackward: .fetchPage
            case .fetchUser: .fetchUser
            case .update: .update
            case .add: .add
            case .remove: .remove
            }
        }
    }

    private struct Gate {
        let call: Call
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var users: [UUID: User] = [:]
        var calls: [Call] = []
        var failures: [(method: Method?, error: UserError)] = []
        var held: Set<Method> = []
        var gates: [Gate] = []
        var servesStale = false
        /// Whether `cursor(after:totalCount:)` makes cursors (off: the protocol's default, nil).
        var makesCursors = false
    }

    private let state = Lock(State())

    /// Beats after every call that reaches the store and every call parked at a gate.
    let changes = Pulse()

    init(_ users: [User] = []) {
        state.withLock { s in for user in users { s.users[user.id] = user } }
    }

    // MARK: test controls

    /// Every call that reached the store, in arrival order.
    var calls: [Call] { state.withLock { $0.calls } }

    func calls(of method: Method) -> [Call] { calls.filter { $0.method == method } }

    func count(of method: Method) -> Int { calls(of: method).count }

    /// The page requests seen, in order.
    var pageRequests: [PageRequest] {
        calls.compactMap { if case .fetchPage(let request) = $0 { request } else { nil } }
    }

    /// The backward page requests seen, in order.
    var backwardRequests: [BackwardPageRequest] {
        calls.compactMap { if case .fetchPageBackward(let request) = $0 { request } else { nil } }
    }

    func stored(_ id: UUID) -> User? { state.withLock { $0.users[id] } }

    /// Puts `user` in the store as is (version included), as another writer would.
    func put(_ user: User) { state.withLock { $0.users[user.id] = user } }

    func delete(_ id: UUID) { _ = state.withLock { $0.users.removeValue(forKey: id) } }

    /// Pages are marked stale (served from a cache) while this is set.
    func setServesStale(_ stale: Bool) { state.withLock { $0.servesStale = stale } }

    /// Lets lists drop rows past their loaded pages (`UserRepository.cursor(after:totalCount:)`).
    func setMakesCursors(_ on: Bool) { state.withLock { $0.makesCursors = on } }

    func cursor(after user: User, totalCount: Int?) -> PageCursor? {
        state.withLock { $0.makesCursors } ? Self.encode(Self.key(user)) : nil
    }

    /// The next `count` calls (of `method`, or of any kind) throw `error`.
    func failNext(_ count: Int = 1, _ method: Method? = nil, with error: UserError) {
        state.withLock { s in
            for _ in 0..<count { s.failures.append((method, error)) }
        }
    }

    /// From now on, calls of `method` wait at a gate until released.
    func hold(_ method: Method) { _ = state.withLock { $0.held.insert(method) } }

    /// Calls of `method` made from now on pass straight through; already held ones stay held.
    func stopHolding(_ method: Method) { _ = state.withLock { $0.held.remove(method) } }

    /// The calls waiting at a gate, oldest first.
    var heldCalls: [Call] { state.withLock { $0.gates.map(\.call) } }

    /// Delivers the answer of the held call at `index` (oldest first).
    func release(at index: Int = 0) {
        let gate = state.withLock { $0.gates.remove(at: index) }
        gate.continuation.resume()
    }

    /// Delivers the answer of the most recent held call.
    func releaseLast() {
        let gate = state.withLock { $0.gates.removeLast() }
        gate.continuation.resume()
    }

    func releaseAll() {
        let gates = state.withLock { s in
            defer { s.gates = [] }
            return s.gates
        }
        for gate in gates { gate.continuation.resume() }
    }

    /// Waits until exactly `count` calls are parked at gates (a held call parks as it arrives).
    func awaitHeldCalls(
        _ count: Int, isolation: isolated (any Actor)? = #isolation,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        await changes.expect(isolation: isolation, sourceLocation: sourceLocation) { self.heldCalls.count == count }
    }

    /// Waits until `count` calls of `method` have reached the store.
    func awaitCalls(
        of method: Method, count: Int, isolation: isolated (any Actor)? = #isolation,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        await changes.expect(isolation: isolation, sourceLocation: sourceLocation) { self.count(of: method) == count }
    }

    // MARK: UserRepository

    func fetchPage(_ request: PageRequest) async throws(UserError) -> UserPage {
        try await answer(.fetchPage(request)) { s throws(UserError) in
            let matching = Self.matching(s, request.search)
            let start: Int
            if let cursor = request.after {
                guard let after = Self.decode(cursor) else {
                    throw .validation(field: .name, message: "bad cursor \(cursor.token)")
                }
                start = matching.firstIndex { Self.key($0) > after } ?? matching.endIndex
            } else {
                start = 0
            }
            let end = min(start + request.limit, matching.endIndex)
            let page = Array(matching[start..<end])
            let next = end < matching.endIndex ? page.last.map { Self.encode(Self.key($0)) } : nil
            return UserPage(users: page, next: next, totalCount: matching.count, isStale: s.servesStale)
        }
    }

    /// The `limit` users before the cursor's key (the last ones without a cursor).
    func fetchPage(_ request: BackwardPageRequest) async throws(UserError) -> UserPage {
        try await answer(.fetchPageBackward(request)) { s throws(UserError) in
            let matching = Self.matching(s, request.search)
            let end: Int
            if let cursor = request.before {
                guard let before = Self.decode(cursor) else {
                    throw .validation(field: .name, message: "bad cursor \(cursor.token)")
                }
                end = matching.firstIndex { Self.key($0) >= before } ?? matching.endIndex
            } else {
                end = matching.endIndex
            }
            let start = max(0, end - request.limit)
            let page = Array(matching[start..<end])
            let previous = start > 0 ? page.first.map { Self.encode(Self.key($0)) } : nil
            return UserPage(users: page, next: nil, previous: previous, totalCount: matching.count, isStale: s.servesStale)
        }
    }

    private static func matching(_ s: State, _ search: String?) -> [User] {
        let search = search?.lowercased()
        return s.users.values
            .filter { user in
                guard let search else { return true }
                return user.name.lowercased().hasPrefix(search)
                    || user.email.lowercased().hasPrefix(search)
            }
            .sorted { Self.key($0) < Self.key($1) }
    }

    func fetchUser(id: UUID) async throws(UserError) -> User {
        try await answer(.fetchUser(id)) { s throws(UserError) in
            guard let user = s.users[id] else { throw .notFound(id: id) }
            return user
        }
    }

    func update(_ user: User) async throws(UserError) -> User {
        try await answer(.update(user)) { s throws(UserError) in
            guard let stored = s.users[user.id] else { throw .notFound(id: user.id) }
            guard stored.version == user.version else { throw .conflict(stored: stored) }
            var saved = user
            saved.version += 1
            s.users[user.id] = saved
            return saved
        }
    }

    func add(_ user: NewUser) async throws(UserError) -> User {
        try await answer(.add(user)) { s throws(UserError) in
            let saved = User(id: user.id, name: user.name, email: user.email, avatarURL: user.avatarURL)
            s.users[saved.id] = saved
            return saved
        }
    }

    func remove(id: UUID) async throws(UserError) {
        try await answer(.remove(id)) { s throws(UserError) in
            guard s.users.removeValue(forKey: id) != nil else { throw .notFound(id: id) }
        }
    }

    // MARK: machinery

    /// Records `call`, computes its result now, then waits at a gate if its kind is held.
    private func answer<T: Sendable>(
        _ call: Call, _ body: (inout State) throws(UserError) -> T
    ) async throws(UserError) -> T {
        let (result, isHeld) = state.withLock { s -> (Result<T, UserError>, Bool) in
            s.calls.append(call)
            let isHeld = s.held.contains(call.method)
            if let index = s.failures.firstIndex(where: { $0.method == nil || $0.method == call.method }) {
                return (.failure(s.failures.remove(at: index).error), isHeld)
            }
            do throws(UserError) {
                return (.success(try body(&s)), isHeld)
            } catch {
                return (.failure(error), isHeld)
            }
        }
        changes.beat()
        if isHeld {
            await withCheckedContinuation { continuation in
                state.withLock { $0.gates.append(Gate(call: call, continuation: continuation)) }
                changes.beat()
            }
        }
        return try result.get()
    }

    private struct Key: Comparable {
        let name: String
        let id: String
        static func < (a: Key, b: Key) -> Bool { (a.name, a.id) < (b.name, b.id) }
    }

    private static func key(_ user: User) -> Key {
        Key(name: user.name.lowercased(), id: user.id.uuidString.lowercased())
    }

    private static func encode(_ key: Key) -> PageCursor {
        PageCursor(token: Data("\(key.id)|\(key.name)".utf8).base64EncodedString())
    }

    private static func decode(_ cursor: PageCursor) -> Key? {
        guard let data = Data(base64Encoded: cursor.token),
              let text = String(data: data, encoding: .utf8),
              let bar = text.firstIndex(of: "|") else { return nil }
        return Key(name: String(text[text.index(after: bar)...]), id: String(text[..<bar]))
    }
}
