import Foundation
import Testing
import UserListDomain
import UserListPresentation
import UserListServer
import UserListTestSupport
import UserListWire

/// The typed differ must produce patches that turn one document into the next, and small ones.
struct StateDiffTests {
    private static func user(_ n: Int, version: Int = 1, name: String? = nil) -> User {
        User(id: UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", n))!,
             name: name ?? "User \(n)", email: "u\(n)@example.com", version: version)
    }

    private static func list(_ users: [User], hasMore: Bool = false) -> NavigationState {
        var state = UserListState()
        state.users = users
        state.hasMore = hasMore
        state.totalCount = users.count
        return NavigationState(screens: [.list(state)])
    }

    private func check(_ a: NavigationState, _ b: NavigationState, sourceLocation: SourceLocation = #_sourceLocation) throws -> [PatchOperation] {
        let ops = StateDiff.ops(from: a, to: b)
        let patched = try JSONPatch.apply(ops, to: StateDocument.make(a))
        #expect(patched == StateDocument.make(b), sourceLocation: sourceLocation)
        // What sessions send: the same operations, written without building them.
        let sent = String(decoding: StateDiff.serializedOps(from: a, to: b), as: UTF8.self)
        #expect(sent == String(decoding: ops.isEmpty ? [] : FrameEncoder.serializedOperations(ops), as: UTF8.self),
                sourceLocation: sourceLocation)
        return ops
    }

    /// Rows are written straight into a page's patch: text that needs JSON's escapes, an avatar
    /// or none, and a large version come out as the `JSONValue` serializer writes them.
    @Test func appendedRowsAreWrittenAsTheSerializerWouldWriteThem() throws {
        let page = [Self.user(1)]
        var more = page
        more.append(User(id: UUID(), name: "Quote \" back\\slash \u{1} tab\t Brontë 山田 🐙", email: "a\"b@example.com",
                         avatarURL: "https://example.com/a?b=\"c\"", version: 9_007_199_254_740_991))
        more.append(User(id: UUID(), name: "", email: "", avatarURL: nil, version: 1))
        let ops = try check(Self.list(page, hasMore: true), Self.list(more))
        #expect(ops.filter { if case .add = $0 { true } else { false } }.count == 2)
    }

    @Test func aRenameInAThousandRowsIsOneReplaceOfOneField() throws {
        let users = (0..<1000).map { Self.user($0) }
        var renamed = users
        renamed[417].name = "User 417b"  // sorts in place
        let ops = try check(Self.list(users), Self.list(renamed))
        #expect(ops == [.replace(path: "/screens/0/state/users/417/name", value: "User 417b")])
    }

    @Test func anAppendedPageIsAddsOnly() throws {
        let users = (0..<100).map { Self.user($0) }
        let ops = try check(Self.list(Array(users[0..<50]), hasMore: true), Self.list(users))
        #expect(ops.filter { if case .add = $0 { true } else { false } }.count == 50)
        #expect(!ops.contains { if case .replace(let path, _) = $0 { path.tokens.last == "users" } else { false } })
    }

    @Test func aRemovalIsOneRemove() throws {
        let users = (0..<300).map { Self.user($0) }
        var fewer = users
        fewer.remove(at: 123)
        let ops = try check(Self.list(users), Self.list(fewer))
        #expect(ops.filter { $0.path.tokens.contains("users") } == [.remove(path: "/screens/0/state/users/123")])
    }

    @Test func randomEditsPushesAndPopsAllRoundTrip() throws {
        var random = SplitMix64(seed: 2026)
        for _ in 0..<300 {
            var users = (0..<Int.random(in: 0...120, using: &random)).map { Self.user($0) }
            let before = Self.list(users)
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                switch Int.random(in: 0..<5, using: &random) {
                case 0 where !users.isEmpty:  // rename in place
                    let i = Int.random(in: 0..<users.count, using: &random)
                    users[i].name += "!"; users[i].version += 1
                case 1 where !users.isEmpty:  // move (a rename that re-sorts)
                    let moved = users.remove(at: Int.random(in: 0..<users.count, using: &random))
                    users.insert(moved, at: Int.random(in: 0...users.count, using: &random))
                case 2:  // insert
                    users.insert(Self.user(1000 + Int(random.next() % 10_000)), at: Int.random(in: 0...users.count, using: &random))
                case 3 where !users.isEmpty:
                    users.remove(at: Int.random(in: 0..<users.count, using: &random))
                default:
                    users.shuffle(using: &random)
                }
            }
            var after = Self.list(users, hasMore: Bool.random(using: &random))
            if Bool.random(using: &random), let first = users.first {
                var detail = UserDetailState(userID: first.id)
                detail.user = first
                detail.draftName = Bool.random(using: &random) ? first.name : "Draft"
                after.screens.append(.detail(detail))
            }
            _ = try check(before, after)
            _ = try check(after, before)
        }
    }
}
