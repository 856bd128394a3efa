import Foundation
import Testing
import UserListServer
import UserListWire

/// The daemon over a real Unix socket: snapshots, patches, replies, mirroring, cross-session updates.
@Suite(.serialized) struct SessionStreamingTests {
    @Test func aClientGetsTheFirstPageThenTheNextPageAsPatches() async throws {
        let daemon = try await DaemonHarness(sampleUsers: 120)
        let client = try daemon.client()
        let welcome = try client.hello(key: "a")
        #expect(welcome.resumed == false)
        #expect(welcome.access == .readWrite)
        try client.waitForState("first page") { _ in client.rows.count == 50 }
        #expect(client.listState["has_more"] == .bool(true))
        #expect(client.listState["total_count"] == .int(120))

        let reply = try client.intent("list", "did_display_row", ["index": 49])
        #expect(reply.outcome == .success(result: nil))
        try client.waitForState("second page") { _ in client.rows.count == 100 }
        let names = client.rows.compactMap { $0["name"]?.stringValue?.lowercased() }
        #expect(names == names.sorted(), "rows stay in the store's order across pages")
        #expect(await daemon.stop() == 0)
    }

    @Test func twoClientsOnOneKeyMirrorEachOther() async throws {
        let daemon = try await DaemonHarness()
        let first = try daemon.client()
        _ = try first.hello(key: "shared")
        try first.waitForState("first page") { _ in first.rows.count == 50 }
        let second = try daemon.client()
        let welcome = try second.hello(key: "shared")
        #expect(welcome.resumed)
        #expect(second.rows.count == 50)

        try first.intent("list", "did_select_row", ["index": 3])
        try first.intent("detail", "set_draft_name", ["name": "Mirrored Draft"])
        try second.waitForState("the draft typed in the other terminal") { _ in
            second.detailState?["draft_name"] == .string("Mirrored Draft")
        }
        #expect(second.document == first.document)
        await daemon.stop()
    }

    @Test func aSaveInOneSessionReachesAnother() async throws {
        let daemon = try await DaemonHarness()
        let editor = try daemon.client()
        _ = try editor.hello(key: "editor")
        let watcher = try daemon.client()
        _ = try watcher.hello(key: "watcher")
        try editor.waitForState("rows") { _ in editor.rows.count == 50 }
        try watcher.waitForState("rows") { _ in watcher.rows.count == 50 }
        let target = editor.rows[10]
        let id = try #require(target["id"]?.stringValue)

        try editor.intent("session", "open_user", ["id": .string(id)])
        try editor.intent("detail", "set_draft_name", ["name": "Aaron Renamed"])
        let saved = try editor.intent("detail", "save")
        guard case .success(let result) = saved.outcome else {
            Issue.record("save failed: \(saved.outcome)")
            return
        }
        #expect(result?.objectValue?["version"] == .int((target["version"]?.int64Value ?? 0) + 1))
        try watcher.waitForState("the rename in the other session", timeout: 5) { _ in
            watcher.rows.contains { $0["id"] == .string(id) && $0["name"] == .string("Aaron Renamed") }
        }
        await daemon.stop()
    }

    @Test func aStaleSaveIsAConflictThatKeepsTheDraft() async throws {
        let daemon = try await DaemonHarness()
        let alice = try daemon.client()
        let bob = try daemon.client()
        _ = try alice.hello(key: "alice")
        _ = try bob.hello(key: "bob")
        try alice.waitForState("rows") { _ in alice.rows.count == 50 }
        let id = try #require(alice.rows[0]["id"]?.stringValue)
        for client in [alice, bob] {
            try client.intent("session", "open_user", ["id": .string(id)])
        }
        try alice.intent("detail", "set_draft_name", ["name": "Alice Wins"])
        try bob.intent("detail", "set_draft_name", ["name": "Bob Loses"])
        #expect(try alice.intent("detail", "save").outcome.isSuccess)
        let reply = try bob.intent("detail", "save")
        guard case .failure(let error) = reply.outcome else {
            Issue.record("expected a conflict, got \(reply.outcome)")
            return
        }
        #expect(error.code == .conflict)
        #expect(error.message.contains("Alice Wins"))
        try bob.waitForState("the conflict on screen") { _ in bob.detailState?["conflict"]?.objectValue?["name"] == .string("Alice Wins") }
        #expect(bob.detailState?["draft_name"] == .string("Bob Loses"))
        await daemon.stop()
    }

    @Test func aReattachAfterDisconnectKeepsTheDraft() async throws {
        let daemon = try await DaemonHarness()
        do {
            let client = try daemon.client()
            _ = try client.hello(key: "laptop")
            try client.waitForState("rows") { _ in client.rows.count == 50 }
            try client.intent("list", "did_select_row", ["index": 0])
            try client.intent("detail", "set_draft_name", ["name": "Unsaved Work"])
        }
        let again = try daemon.client()
        let welcome = try again.hello(key: "laptop")
        #expect(welcome.resumed)
        #expect(again.detailState?["draft_name"] == .string("Unsaved Work"))
        await daemon.stop()
    }

    @Test func aRestartKeepsScreensAndDraftsUnderTheSameKey() async throws {
        let daemon = try await DaemonHarness()
        let before = try daemon.client()
        let firstWelcome = try before.hello(key: "restart-me")
        try before.waitForState("rows") { _ in before.rows.count == 50 }
        try before.intent("list", "did_select_row", ["index": 2])
        try before.intent("detail", "set_draft_name", ["name": "Survives Restarts"])
        #expect(await daemon.stop() == 0)
        #expect(before.received.contains { if case .goodbye = $0 { true } else { false } } || (try? before.next(where: "goodbye", timeout: 2) { if case .goodbye = $0 { true } else { nil } }) == true)

        try await daemon.start()
        let after = try daemon.client()
        let welcome = try after.hello(key: "restart-me")
        #expect(welcome.resumed)
        #expect(welcome.epoch != firstWelcome.epoch)
        try after.waitForState("the restored draft after reload") { _ in
            after.detailState?["draft_name"] == .string("Survives Restarts") && after.detailState?["user"] != .null
        }
        await daemon.stop()
    }
}

extension ServerMessage.Reply.Outcome {
    var isSuccess: Bool { if case .success = self { true } else { false } }
}
