import Foundation
import Glibc
import Testing
import UserListDomain
import UserListServer
import UserListWire

/// Sessions that show the same list follow changes by replaying one another's steps and patch
/// bytes (`ListSteps`, `SharedPatches`). Whatever touches such a session between changes (a
/// second terminal, a resync, an intent, a client that goes away and comes back, someone else
/// opening a user, an import, an add that cuts lists back) must find it exactly where its
/// clients are, and its clients must go on from there: each holds what a fresh snapshot says,
/// with no patch missing or repeated.
@Suite(.serialized, .timeLimit(.minutes(3))) struct SessionsTouchedMidFanOutTests {
    @Test func sessionsFollowingOneListStayWhereTheirClientsAreWhateverTouchesThem() async throws {
        let daemon = try await DaemonHarness(sampleUsers: 120, sharingPages: true)
        var (editor, watchers) = try await daemon.editorAndListWatchers(8)
        let first = try #require(editor.rows[5]["id"]?.stringValue)
        var renames = 0
        func rename() async throws {
            renames += 1
            let name = "Aaaa Shared \(renames)"
            let reply = try await editor.intent("session", "rename_user", ["id": .string(first), "name": .string(name)])
            guard case .success = reply.outcome else { throw Failure("rename \(renames): \(reply.outcome)") }
            for watcher in watchers {
                try await watcher.waitForState("rename \(renames)") { _ in watcher.rows.contains { $0["name"] == .string(name) } }
            }
        }

        try await rename()
        try await rename()

        // A second terminal on a session that replayed the last two changes.
        let secondTerminal = try daemon.client()
        _ = try await secondTerminal.hello(key: "watcher-0")
        try await secondTerminal.waitForState("the second terminal's snapshot") { _ in secondTerminal.rows.count == 50 }
        watchers.append(secondTerminal)
        // A resync, and an intent (the next page).
        try watchers[1].send(.resync)
        let paging = watchers[2]
        try await paging.intent("list", "did_display_row", ["index": 49])
        try await paging.waitForState("the second page") { _ in paging.rows.count > 90 }
        // A client that goes away: its session keeps following, and a new terminal finds it current.
        let leaving = watchers.remove(at: 3)
        shutdown(leaving.fd, Int32(SHUT_RDWR))
        try await rename()
        let back = try daemon.client()
        _ = try await back.hello(key: "watcher-3")
        let latest = JSONValue.string("Aaaa Shared \(renames)")
        try await back.waitForState("the returning terminal's snapshot") { _ in back.rows.contains { $0["name"] == latest } }
        watchers.append(back)
        // Someone opens a user: every list marks it.
        try await editor.intent("session", "open_user", ["id": .string(first)])
        for watcher in watchers {
            try await watcher.waitForState("the marker") { document in
                document["screens"]?.arrayValue?.first?["state"]?["open_elsewhere"]?[first] == .bool(true)
            }
        }
        try await rename()
        try await rename()
        // An import: many changes at once, as one batch, rows added at the top.
        let imported: [JSONValue] = (10..<30).map { index in
            .object(["id": .string(UUID().uuidString.lowercased()), "name": .string("Aaab Imported \(index)"),
                     "email": .string("imported.\(index)@example.com")])
        }
        let reply = try await editor.intent("session", "import_users", ["users": .array(imported)])
        #expect(reply.outcome.isSuccess, "the import: \(reply.outcome)")
        for watcher in watchers {
            try await watcher.waitForState("the import") { _ in watcher.rows.contains { $0["name"] == "Aaab Imported 29" } }
        }
        try await rename()
        // One row added at the top of a full page: each list cuts itself back (and moves its
        // cursor), replayed with the cut.
        let added = try await editor.intent("session", "add_user", ["name": "Aaaa Added", "email": "added@example.com"])
        #expect(added.outcome.isSuccess, "the add: \(added.outcome)")
        for watcher in watchers {
            try await watcher.waitForState("the add") { _ in watcher.rows.contains { $0["name"] == "Aaaa Added" } }
        }
        try await rename()

        for watcher in watchers {
            try await watcher.expectMirrorsASnapshot()
        }
        await daemon.stop()
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
