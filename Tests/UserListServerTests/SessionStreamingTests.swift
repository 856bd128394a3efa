import Foundation
import Testing
import UserListDomain
import UserListServer
import UserListWire

/// The daemon over a real Unix socket: snapshots, patches, replies, mirroring, cross-session updates.
@Suite(.serialized, .timeLimit(.minutes(3))) struct SessionStreamingTests {
    @Test func aClientGetsTheFirstPageThenTheNextPageAsPatches() async throws {
        let daemon = try await DaemonHarness(sampleUsers: 120)
        let client = try daemon.client()
        let welcome = try await client.hello(key: "a")
        #expect(welcome.resumed == false)
        #expect(welcome.access == .readWrite)
        #expect(client.epoch == welcome.epoch, "the first snapshot is in the epoch the welcome named")
        try await client.waitForState("first page") { _ in client.rows.count == 50 }
        #expect(client.listState["has_more"] == .bool(true))
        #expect(client.listState["total_count"] == .int(120))

        let reply = try await client.intent("list", "did_display_row", ["index": 49])
        #expect(reply.outcome == .success(result: nil))
        try await client.waitForState("second page") { _ in client.rows.count == 100 }
        let names = client.rows.compactMap { $0["name"]?.stringValue.map(TextKey.fold) }
        #expect(names == names.sorted(), "rows stay in the store's order across pages")
        #expect(await daemon.stop() == 0)
    }

    @Test func twoClientsOnOneKeyMirrorEachOther() async throws {
        let daemon = try await DaemonHarness()
        let first = try daemon.client()
        _ = try await first.hello(key: "shared")
        try await first.waitForState("first page") { _ in first.rows.count == 50 }
        let second = try daemon.client()
        let welcome = try await second.hello(key: "shared")
        #expect(welcome.resumed)
        #expect(second.rows.count == 50)

        try await first.intent("list", "did_select_row", ["index": 3])
        try await first.intent("detail", "set_draft_name", ["name": "Mirrored Draft"])
        try await second.waitForState("the draft typed in the other terminal") { _ in
            second.detailState?["draft_name"] == .string("Mirrored Draft")
        }
        #expect(second.document == first.document)
        await daemon.stop()
    }

    @Test func aSaveInOneSessionReachesAnother() async throws {
        let daemon = try await DaemonHarness()
        let editor = try daemon.client()
        _ = try await editor.hello(key: "editor")
        let watcher = try daemon.client()
        _ = try await watcher.hello(key: "watcher")
        try await editor.waitForState("rows") { _ in editor.rows.count == 50 }
        try await watcher.waitForState("rows") { _ in watcher.rows.count == 50 }
        let target = editor.rows[10]
        let id = try #require(target["id"]?.stringValue)

        try await editor.intent("session", "open_user", ["id": .string(id)])
        try await editor.intent("detail", "set_draft_name", ["name": "Aaron Renamed"])
        let saved = try await editor.intent("detail", "save")
        guard case .success(let result) = saved.outcome else {
            Issue.record("save failed: \(saved.outcome)")
            return
        }
        #expect(result?.objectValue?["version"] == .int((target["version"]?.int64Value ?? 0) + 1))
        try await watcher.waitForState("the rename in the other session") { _ in
            watcher.rows.contains { $0["id"] == .string(id) && $0["name"] == .string("Aaron Renamed") }
        }
        await daemon.stop()
    }

    @Test func anotherPersonsSaveMeetsADraftAsAConflictThatKeepsIt() async throws {
        let daemon = try await DaemonHarness()
        let alice = try daemon.client()
        let bob = try daemon.client()
        _ = try await alice.hello(key: "alice")
        _ = try await bob.hello(key: "bob")
        try await alice.waitForState("rows") { _ in alice.rows.count == 50 }
        let id = try #require(alice.rows[0]["id"]?.stringValue)
        for client in [alice, bob] {
            try await client.intent("session", "open_user", ["id": .string(id)])
        }
        try await alice.intent("detail", "set_draft_name", ["name": "Alice Wins"])
        try await bob.intent("detail", "set_draft_name", ["name": "Bob Loses"])
        #expect(try await alice.intent("detail", "save").outcome.isSuccess)
        try await bob.waitForState("the conflict on screen") { _ in
            bob.detailState?["conflicts"]?.arrayValue?.first?["theirs"] == .string("Alice Wins")
        }
        let reply = try await bob.intent("detail", "save")
        guard case .failure(let error) = reply.outcome else {
            Issue.record("expected a refusal, got \(reply.outcome)")
            return
        }
        #expect(error.code == .validation)
        #expect(error.message.contains("keep mine or take theirs"))
        #expect(bob.detailState?["draft_name"] == .string("Bob Loses"))
        await daemon.stop()
    }

    @Test func aReattachAfterDisconnectKeepsTheDraft() async throws {
        let daemon = try await DaemonHarness()
        do {
            let client = try daemon.client()
            _ = try await client.hello(key: "laptop")
            try await client.waitForState("rows") { _ in client.rows.count == 50 }
            try await client.intent("list", "did_select_row", ["index": 0])
            try await client.intent("detail", "set_draft_name", ["name": "Unsaved Work"])
        }
        let again = try daemon.client()
        let welcome = try await again.hello(key: "laptop")
        #expect(welcome.resumed)
        #expect(again.detailState?["draft_name"] == .string("Unsaved Work"))
        await daemon.stop()
    }

    @Test func byeEndsTheSessionWhileADroppedConnectionKeepsIt() async throws {
        let daemon = try await DaemonHarness()
        let leaving = try daemon.client()
        _ = try await leaving.hello(key: "one-shot")
        try leaving.send(.bye)
        let reason = try await leaving.next(where: "goodbye") { message -> String? in
            if case .goodbye(let reason) = message { reason } else { nil }
        }
        #expect(reason == "bye")
        let next = try daemon.client()
        #expect(try await next.hello(key: "one-shot").resumed == false, "bye ended the session")
        await daemon.stop()
    }

    @Test func aRestartKeepsScreensAndDraftsUnderTheSameKey() async throws {
        let daemon = try await DaemonHarness()
        let before = try daemon.client()
        let firstWelcome = try await before.hello(key: "restart-me")
        try await before.waitForState("rows") { _ in before.rows.count == 50 }
        try await before.intent("list", "did_select_row", ["index": 2])
        try await before.intent("detail", "set_draft_name", ["name": "Survives Restarts"])
        #expect(await daemon.stop() == 0)
        let goodbye = try? await before.next(where: "goodbye") { message -> Bool? in
            if case .goodbye = message { true } else { nil }
        }
        #expect(goodbye == true, "a client is told the daemon is stopping")

        try await daemon.start()
        let after = try daemon.client()
        let welcome = try await after.hello(key: "restart-me")
        #expect(welcome.resumed)
        #expect(welcome.epoch != firstWelcome.epoch)
        try await after.waitForState("the restored draft after reload") { _ in
            after.detailState?["draft_name"] == .string("Survives Restarts") && after.detailState?["user"] != .null
        }
        await daemon.stop()
    }
}

extension ServerMessage.Reply.Outcome {
    var isSuccess: Bool { if case .success = self { true } else { false } }
}
