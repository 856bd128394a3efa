import Foundation
import Testing
import UserListDomain
import UserListServer
import UserListWire

/// Many sessions showing the same first page follow other sessions' writes: on each loop one
/// computes the change and the others replay its step and its patch (`ListSteps`, `SharedPatches`).
/// What each client holds must be what a fresh snapshot says, change after change, and the
/// sessions must go on from there (a next page, another change) as if each had computed it.
@Suite(.serialized, .timeLimit(.minutes(3))) struct SharedFollowingTests {
    @Test func sessionsSharingAWindowEachHoldTheStateASnapshotGives() async throws {
        let daemon = try await DaemonHarness(sampleUsers: 120, sharingPages: true)
        // Six list-only sessions (spread over the loops, so each loop has several in the same
        // state), one more with two terminals, and one showing a user.
        var (editor, watchers) = try await daemon.editorAndListWatchers(6)
        let secondTerminal = try daemon.client()
        _ = try await secondTerminal.hello(key: "watcher-0")
        watchers.append(secondTerminal)
        let reader = try daemon.client()
        _ = try await reader.hello(key: "reader")
        try await reader.waitForState("the reader's first page") { _ in reader.rows.count == 50 }
        let shown = try #require(reader.rows[20]["id"]?.stringValue)
        try await reader.intent("session", "open_user", ["id": .string(shown)])
        watchers.append(reader)

        let renamed = try #require(editor.rows[10]["id"]?.stringValue)
        let removed = try #require(editor.rows[30]["id"]?.stringValue)
        // Into the window at its top, a row gone, a new row, another that grows the list past
        // its page (cut back to it, with its cursor), then the first one out past the page.
        try await expectSuccess(editor.intent("session", "rename_user", ["id": .string(renamed), "name": "Aaaa Renamed"]))
        try await expectSuccess(editor.intent("session", "remove_user", ["id": .string(removed)]))
        let added = try await editor.intent("session", "add_user", ["name": "Aaab Added", "email": "added@example.com"])
        let addedID = try #require(expectSuccess(added)?.objectValue?["id"]?.stringValue)
        try await expectSuccess(editor.intent("session", "add_user", ["name": "Aaac Added", "email": "added.too@example.com"]))
        try await expectSuccess(editor.intent("session", "rename_user", ["id": .string(renamed), "name": "Zzzz Renamed"]))

        for watcher in watchers {
            // Each change's `changed` event follows its patch: the fifth one comes last.
            try await watcher.waitForState("all five changes") { _ in changedEvents(watcher) == 5 }
            #expect(watcher.rows.contains { $0["id"] == .string(addedID) })
            #expect(!watcher.rows.contains { $0["id"] == .string(removed) || $0["id"] == .string(renamed) })
            #expect(watcher.listState["total_count"] == .int(121))
            #expect(watcher.listState["is_stale"] == .bool(true), "changes made elsewhere mark the list stale")
            try await watcher.expectMirrorsASnapshot()
        }

        // Each goes on from the state it took: the next page, and one more change.
        for watcher in watchers.prefix(3) {
            let rows = watcher.rows.count
            try await watcher.intent("list", "did_display_row", ["index": .int(Int64(rows - 1))])
            try await watcher.waitForState("the second page") { _ in watcher.rows.count > rows + 40 }
        }
        try await expectSuccess(editor.intent("session", "rename_user", ["id": .string(addedID), "name": "Aaab Added Again"]))
        for watcher in watchers {
            try await watcher.waitForState("the sixth change") { _ in
                watcher.rows.contains { $0["id"] == .string(addedID) && $0["name"] == .string("Aaab Added Again") }
            }
            try await watcher.expectMirrorsASnapshot()
            let names = watcher.rows.compactMap { $0["name"]?.stringValue.map(TextKey.fold) }
            #expect(names == names.sorted(), "rows stay in list order")
        }
        await daemon.stop()
    }

    private func changedEvents(_ client: WireTestClient) -> Int {
        client.received.count { if case .event(let event) = $0 { event.name == "changed" } else { false } }
    }

    /// The reply's result; a failed write ends the test.
    @discardableResult
    private func expectSuccess(_ reply: ServerMessage.Reply) throws -> JSONValue? {
        guard case .success(let result) = reply.outcome else {
            Issue.record("the write failed: \(reply.outcome)")
            throw CancellationError()
        }
        return result
    }
}
