import Foundation
import Testing
import UserListData
@testable import UserListServer
import UserListDomain
import UserListWire

/// `export_page` walks the whole store in list order in pages of up to 10,000 users, each of at
/// most about a megabyte (issue #29's export speed, and a connection's 4 MiB limit on queued
/// replies): a page of long users is cut short and `next` goes on from where it stopped, so
/// walking the pages gives every user once, in the order of pages of 1,000.
@Suite struct ExportPageTests {
    /// Users whose JSON is over 2 KB each: 600 of them do not fit one page.
    static func longUsers(_ count: Int) -> [User] {
        (0..<count).map { index in
            User(id: UUID(), name: "Long \"Quoted\" Name \(index) " + String(repeating: "x", count: 150),
                 email: "long.\(index)@example.com",
                 avatarURL: "https://avatars.example.com/" + String(repeating: "a", count: 1_900) + "/\(index).png", version: 1)
        }
    }

    func walk(_ client: WireTestClient, limit: Int) async throws -> (ids: [String], pageBytes: [Int]) {
        var ids: [String] = [], sizes: [Int] = []
        var after: JSONValue?
        repeat {
            var args: [String: JSONValue] = ["limit": .int(Int64(limit))]
            if let after { args["after"] = after }
            let reply = try await client.intent("session", "export_page", args)
            guard case .success(let result?) = reply.outcome else { Issue.record("export_page failed: \(reply)"); break }
            let users = result["users"]?.arrayValue ?? []
            ids += users.compactMap { $0["id"]?.stringValue }
            sizes.append(JSONValue.array(users).serialized().count)
            after = result["next"]?.stringValue.map(JSONValue.string)
        } while after != nil
        return (ids, sizes)
    }

    @Test func bigPagesEndAtAMegabyteAndTheWalkGivesEveryUserOnceInOrder() async throws {
        let daemon = try await DaemonHarness(sampleUsers: 300)
        let store = try SQLiteUserRepository(path: daemon.databasePath)
        _ = try await store.importUsers(Self.longUsers(600))
        let client = try daemon.client()
        _ = try await client.hello(key: "export")

        let big = try await walk(client, limit: 10_000)
        let small = try await walk(client, limit: 1_000)
        #expect(big.ids.count == 900 && Set(big.ids).count == 900, "every user once: \(big.ids.count), \(Set(big.ids).count) distinct")
        #expect(big.ids == small.ids, "the same order as pages of 1,000")
        #expect(big.pageBytes.count >= 2, "the long users did not fit one page: \(big.pageBytes)")
        #expect(big.pageBytes.allSatisfy { $0 <= 1 << 20 }, "each page's users at most 1 MiB: \(big.pageBytes)")
        await daemon.stop()
    }

    /// The page's result is written straight into bytes: the same bytes as the `JSONValue` a
    /// reply used to carry, whatever the users' fields hold.
    @Test func aPagesResultIsTheJSONOfItsUsers() throws {
        var users = Self.longUsers(3)
        users[0].avatarURL = nil
        users[1].name = "tab\tnew\nline \u{1} \\ \" Zoë 山田 🐙"
        for (next, total) in [(PageCursor?.some(PageCursor(token: "abc_-")), Int?.some(900)), (nil, nil)] {
            let bytes = Session.exportResult(users[...], next: next, totalCount: total)
            let expected: JSONValue = .object([
                "users": .array(users.map(StateDocument.user)),
                "next": next.map { .string($0.token) } ?? .null,
                "total_count": total.map { .int(Int64($0)) } ?? .null,
            ])
            #expect(bytes == expected.serialized())
        }
    }

    @Test func aLimitOverTenThousandIsRefused() async throws {
        let daemon = try await DaemonHarness(sampleUsers: 10)
        let client = try daemon.client()
        _ = try await client.hello(key: "export")
        let reply = try await client.intent("session", "export_page", ["limit": 10_001])
        guard case .failure(let error) = reply.outcome else { Issue.record("accepted: \(reply)"); return }
        #expect(error.code == .invalidArgs)
        await daemon.stop()
    }
}
