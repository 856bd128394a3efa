import Foundation
import Testing
import UserListServer
import UserListWire

/// The behaviours PROTOCOL.md promises for intents, over a real socket: each one a deviation a
/// client written from the spec alone once found.
@Suite(.serialized) struct IntentConformanceTests {
    private func attached(_ daemon: DaemonHarness, _ key: String) async throws -> WireTestClient {
        let client = try daemon.client()
        _ = try await client.hello(key: key)
        try await client.waitForState("first page") { _ in client.rows.count == 50 }
        return client
    }

    private func code(_ reply: ServerMessage.Reply) -> ErrorCode? {
        if case .failure(let error) = reply.outcome { error.code } else { nil }
    }

    @Test func openUserReplacesTheDetailScreenAndAnUnknownIDLeavesNone() async throws {
        let daemon = try await DaemonHarness()
        let client = try await attached(daemon, "open")
        let first = try #require(client.rows[1]["id"])
        let second = try #require(client.rows[2]["id"])

        let unknown = try await client.intent("session", "open_user", ["id": "00000000-0000-4000-8000-000000000000"])
        #expect(code(unknown) == .notFound)
        #expect(client.screens.count == 1, "an unknown id leaves no screen")

        let opened = try await client.intent("session", "open_user", ["id": first])
        #expect(opened.outcome == .success(result: .object(client.rows[1])), "the result is the user")
        #expect(client.screens.count == 2)
        #expect(client.detailState?["user"] == .object(client.rows[1]), "loaded when the reply arrives")

        try await client.intent("session", "open_user", ["id": second])
        #expect(client.screens.count == 2, "a second open_user replaces the detail screen")
        #expect(client.detailState?["user_id"] == second)
        #expect(client.screens.compactMap { $0["id"]?.stringValue } == ["list", "detail"])

        #expect(code(try await client.intent("session", "open_user", ["id": "00000000-0000-4000-8000-000000000000"])) == .notFound)
        #expect(client.detailState?["user_id"] == second, "a failed open leaves the open screen alone")
        await daemon.stop()
    }

    @Test func didSelectRowRepliesWithTheDetailLoaded() async throws {
        let daemon = try await DaemonHarness()
        let client = try await attached(daemon, "select")
        let row = client.rows[4]
        let reply = try await client.intent("list", "did_select_row", ["index": 4])
        #expect(reply.outcome == .success(result: .object(row)))
        #expect(client.detailState?["user"] == .object(row))
        await daemon.stop()
    }

    @Test(arguments: [-1, 50, 1_000])
    func didDisplayRowOutsideTheLoadedRowsIsInvalidArgs(index: Int) async throws {
        let daemon = try await DaemonHarness()
        let client = try await attached(daemon, "display")
        #expect(code(try await client.intent("list", "did_display_row", ["index": .int(Int64(index))])) == .invalidArgs)
        #expect(code(try await client.intent("list", "did_select_row", ["index": .int(Int64(index))])) == .invalidArgs)
        #expect(try await client.intent("list", "did_display_row", ["index": 49]).outcome.isSuccess)
        #expect(client.rows.count == 100, "the last row loads the next page before the reply")
        await daemon.stop()
    }

    @Test func addAndRemoveReplyAfterTheirPatchesAndTheAuthorIsNotToldOfItsOwnChange() async throws {
        let daemon = try await DaemonHarness()
        let author = try await attached(daemon, "author")
        let watcher = try await attached(daemon, "watcher")

        let added = try await author.intent("list", "add_user", ["name": "Aaaa First", "email": "first@example.com"])
        guard case .success(let result?) = added.outcome, let id = result["id"] else {
            Issue.record("add_user failed: \(added.outcome)")
            return
        }
        #expect(result["name"] == "Aaaa First" && result["version"] == 1, "the result is the new user")
        #expect(author.rows.first?["id"] == id, "the row is on screen when the reply arrives")
        #expect(author.listState["total_count"] == .int(121))
        #expect(author.listState["is_stale"] == .bool(false), "our own change does not make our list stale")

        let changed = try await watcher.next(where: "the changed event") { message -> JSONValue? in
            if case .event(let event) = message, event.name == "changed" { event.payload } else { nil }
        }
        #expect(changed["kind"] == "added" && changed["id"] == id)
        #expect(watcher.listState["is_stale"] == .bool(true), "a change made elsewhere marks the list stale")

        let removed = try await author.intent("list", "remove_user", ["id": id])
        #expect(removed.outcome.isSuccess)
        #expect(!author.rows.contains { $0["id"] == id }, "the row is gone when the reply arrives")

        // Nothing about either change ever reaches the author as `changed`.
        try await author.intent("list", "dismiss_error")
        #expect(!author.received.contains { if case .event(let event) = $0 { event.name == "changed" } else { false } })
        await daemon.stop()
    }

    @Test func aSaveByAnotherIsMergedLiveAndBobsSaveWaitsForHisChoice() async throws {
        let daemon = try await DaemonHarness()
        let alice = try await attached(daemon, "alice")
        let bob = try await attached(daemon, "bob")
        let id = try #require(alice.rows[0]["id"])
        try await alice.intent("session", "open_user", ["id": id])
        try await bob.intent("session", "open_user", ["id": id])
        try await bob.intent("detail", "set_draft_name", ["name": "Bob Typing"])
        try await bob.intent("detail", "set_draft_email", ["email": "bob.typing@example.com"])

        try await alice.intent("detail", "set_draft_name", ["name": "Alice Saved"])
        #expect(try await alice.intent("detail", "save").outcome.isSuccess)
        // On bob's screen at once: the name both changed is a conflict naming who saved it.
        try await bob.waitForState("the conflict, with its author") { _ in
            bob.detailState?["conflicts"]?.arrayValue?.first?["author"]?.stringValue != nil
        }
        #expect(bob.detailState?["conflicts"]?.arrayValue?.first?["field"] == "name")
        #expect(bob.detailState?["conflicts"]?.arrayValue?.first?["theirs"] == "Alice Saved")
        #expect(bob.detailState?["draft_name"] == "Bob Typing", "his draft stays beside theirs")
        #expect(bob.detailState?["can_save"] == false)

        #expect(code(try await bob.intent("detail", "save")) == .validation, "no save before the choice")
        #expect(code(try await bob.intent("detail", "keep_mine", ["field": "email"])) == .invalidArgs)
        try await bob.intent("detail", "take_theirs", ["field": "name"])
        #expect(bob.detailState?["draft_name"] == "Alice Saved" && bob.detailState?["dirty_fields"] == ["email"])
        let saved = try await bob.intent("detail", "save")
        guard case .success(let user) = saved.outcome else {
            Issue.record("save: \(saved.outcome)")
            return
        }
        #expect(user?["name"] == "Alice Saved" && user?["email"] == "bob.typing@example.com",
                "alice's name and bob's email: nobody's change lost")
        await daemon.stop()
    }

    @Test func aOneShotSetThatLosesItsVersionCheckSaysWhoSavedWhatAndWhen() async throws {
        let daemon = try await DaemonHarness()
        let script = try await attached(daemon, "script")
        let id = try #require(script.rows[2]["id"])
        let first = try await script.intent("session", "set_user", ["id": id, "email": "first@example.com", "expected_version": 1])
        #expect(first.outcome.isSuccess, "\(first.outcome)")
        let late = try await script.intent("session", "set_user", ["id": id, "name": "Too Late", "expected_version": 1])
        guard case .failure(let error) = late.outcome else {
            Issue.record("a stale set must be refused: \(late.outcome)")
            return
        }
        #expect(error.code == .conflict)
        #expect(error.message.contains("changed the email to “first@example.com”") && error.message.contains("just now"),
                "who, what and when: \(error.message)")
        // Only the fields given: the name is untouched by the first set, the avatar by both.
        let after = try await script.intent("session", "set_user", ["id": id, "avatar_url": .null])
        guard case .success(let user) = after.outcome else {
            Issue.record("\(after.outcome)")
            return
        }
        #expect(user?["email"] == "first@example.com" && user?["avatar_url"] == .null && user?["name"] == script.rows[2]["name"])
        // A field set to what is stored changes nothing, and the result says so (userctl prints
        // "unchanged"); a change has no such mark.
        let avatar: JSONValue = "https://example.com/a.png"
        let changed = try await script.intent("session", "set_user", ["id": id, "avatar_url": avatar])
        let same = try await script.intent("session", "set_user", ["id": id, "avatar_url": avatar])
        guard case .success(let set) = changed.outcome, case .success(let stored) = same.outcome else {
            Issue.record("\(changed.outcome), \(same.outcome)")
            return
        }
        #expect(set?["unchanged"] == nil && set?["avatar_url"] == avatar)
        #expect(stored?["unchanged"] == .bool(true) && stored?["version"] == set?["version"])
        #expect(code(try await script.intent("session", "set_user", ["id": id])) == .invalidArgs, "nothing to change")
        await daemon.stop()
    }

    @Test func aUserRemovedWhileEditedSaysWhoAndCanBeCreatedAgainFromTheDraft() async throws {
        let daemon = try await DaemonHarness()
        let alice = try await attached(daemon, "alice")
        let bob = try await attached(daemon, "bob")
        let id = try #require(alice.rows[4]["id"])
        try await alice.intent("session", "open_user", ["id": id])
        try await alice.intent("detail", "set_draft_email", ["email": "kept@example.com"])
        #expect(try await bob.intent("session", "remove_user", ["id": id]).outcome.isSuccess)
        try await alice.waitForState("the removal, with who did it") { _ in
            alice.detailState?["removal"]?["author"]?.stringValue != nil
        }
        #expect(alice.detailState?["user"] == .null && alice.detailState?["draft_email"] == "kept@example.com")
        #expect(alice.detailState?["can_save"] == false)
        try await alice.intent("detail", "recreate")
        #expect(alice.detailState?["is_new"] == true && alice.detailState?["can_save"] == true)
        let saved = try await alice.intent("detail", "save")
        guard case .success(let user) = saved.outcome else {
            Issue.record("\(saved.outcome)")
            return
        }
        #expect(user?["id"] == id && user?["email"] == "kept@example.com", "created again, same id, from the draft")
        await daemon.stop()
    }

    @Test func anImportThatChangesAUserBumpsItsVersionAndReachesOpenScreens() async throws {
        let daemon = try await DaemonHarness()
        let viewer = try await attached(daemon, "viewer")
        let importer = try await attached(daemon, "importer")
        var user = viewer.rows[3]
        try await viewer.intent("session", "open_user", ["id": user["id"]!])
        user["name"] = "Imported Over"
        let reply = try await importer.intent("session", "import_users", ["users": [.object(user)]])
        #expect(reply.outcome == .success(result: ["imported": 1]))
        try await viewer.waitForState("the import on the open screen") { _ in
            viewer.detailState?["user"]?["name"] == "Imported Over"
        }
        #expect(viewer.detailState?["user"]?["version"] == 2, "the import gave the user a new version")

        // A save from a screen edited before the import is a conflict, not a lost update.
        let stale = try await attached(daemon, "stale")
        try await stale.intent("session", "open_user", ["id": user["id"]!])
        try await stale.intent("detail", "set_draft_name", ["name": "Edited Before"])
        user["name"] = "Imported Again"
        user["version"] = 1
        #expect(try await importer.intent("session", "import_users", ["users": [.object(user)]]).outcome.isSuccess)
        _ = try await stale.next(where: "the import") { message -> Bool? in
            if case .event(let event) = message, event.name == "changed" { true } else { nil }
        }
        #expect(stale.detailState?["conflicts"]?.arrayValue?.first?["theirs"] == "Imported Again", "the import meets the draft on screen")
        #expect(code(try await stale.intent("detail", "save")) == .validation, "not a lost update: a choice first")
        await daemon.stop()
    }

    @Test func oneShotSessionWritesLeaveTheScreensOfASharedSessionAlone() async throws {
        let daemon = try await DaemonHarness()
        let terminal = try await attached(daemon, "shared")
        try await terminal.intent("list", "did_select_row", ["index": 2])
        let id = try #require(terminal.detailState?["user_id"])
        let script = try daemon.client()
        _ = try await script.hello(key: "shared")

        let renamed = try await script.intent("session", "rename_user", ["id": id, "name": "Scripted Name", "expected_version": 1])
        #expect(renamed.outcome.isSuccess, "\(renamed.outcome)")
        #expect(renamed.outcome == .success(result: .object(script.detailState?["user"]?.objectValue ?? [:])))
        #expect(code(try await script.intent("session", "rename_user", ["id": id, "name": "Late", "expected_version": 1])) == .conflict)
        let added = try await script.intent("session", "add_user", ["name": "Scripted User", "email": "scripted@example.com"])
        guard case .success(let user?) = added.outcome, let newID = user["id"] else {
            Issue.record("add_user failed: \(added.outcome)")
            return
        }
        #expect(try await script.intent("session", "remove_user", ["id": newID]).outcome.isSuccess)
        try await terminal.waitForState("the rename on the terminal") { _ in terminal.detailState?["draft_name"] == "Scripted Name" }
        #expect(terminal.screens.count == 2, "the terminal's detail screen is still open")
        #expect(terminal.detailState?["user_id"] == id)
        await daemon.stop()
    }

    @Test func anIntentIDBeyondTwoToThe53IsRefusedNotEchoed() async throws {
        let daemon = try await DaemonHarness()
        let client = try await attached(daemon, "ids")
        client.sendJSON(#"{"type":"intent","id":9007199254740992,"screen":"list","action":"refresh"}"#)
        let error = try await client.nextError()
        #expect(error.code == .invalidMessage)
        #expect(error.id == nil)
        #expect(try await client.intent("list", "dismiss_error").outcome.isSuccess, "the connection goes on")
        #expect(!client.received.contains { if case .reply(let reply) = $0 { reply.id == 9_007_199_254_740_992 } else { false } })
        await daemon.stop()
    }
}
