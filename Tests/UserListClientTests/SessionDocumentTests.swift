import Foundation
import Testing
import UserListClient
import UserListWire

/// The typed view of the detail screen's state (state.schema.json): per-field drafts, dirty
/// fields, field errors, conflicts, followed fields, removal, is_new and read_only, read from
/// the recorded conflict transcript (Protocol/examples/conflict.jsonl) and from hand-made states.
@Suite struct SessionDocumentTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Protocol/examples").standardized.path

    /// Connection `a` of the conflict transcript, patched until its conflict names who saved.
    @Test func theRecordedConflictReadsAsFields() throws {
        let text = try String(contentsOfFile: Self.examples + "/conflict.jsonl", encoding: .utf8)
        var document: JSONValue?
        var sawConflict = false
        for line in text.split(separator: "\n") {
            let record = try JSONValue(parsing: String(line))
            guard record["conn"]?.stringValue == "a", record["dir"]?.stringValue == "s2c", let frame = record["frame"] else { continue }
            switch frame["type"]?.stringValue {
            case "snapshot": document = frame["state"]
            case "patch":
                let message = try ServerMessage(frame: Array(frame.description.utf8))
                guard case .patch(let patch) = message, let current = document else { continue }
                document = try JSONPatch.apply(patch.ops, to: current)
            default: continue
            }
            // The conflict shows first with its author unknown (null), then with who saved it.
            guard let detail = SessionDocument(document).detail, detail.conflicts.first?.author != nil else { continue }
            sawConflict = true
            #expect(detail.conflicts.map(\.field) == [.name] && detail.conflicts.first?.theirs == "Rear Admiral Grace Hopper"
                && detail.conflicts.first?.author == "root")
            #expect(detail.draftName == "Grace B. Hopper" && detail.draftEmail == "grace.hopper@navy.example")
            #expect(detail.dirtyFields.contains(.email) && detail.conflict(on: .name) != nil && detail.conflict(on: .email) == nil)
            #expect(detail.stored(.name) == "Rear Admiral Grace Hopper" && detail.draft(.email) == "grace.hopper@navy.example")
            #expect(!detail.readOnly && !detail.isNew && detail.removal == nil)
            break
        }
        #expect(sawConflict, "the transcript reaches a conflict")
    }

    @Test func everyMemberOfTheDetailStateIsRead() {
        let state: JSONValue = [
            "user_id": "u1", "user": nil, "draft_name": "Ada", "draft_email": "ada@", "draft_avatar_url": "",
            "dirty_fields": ["name", "email"], "field_errors": ["email": "“ada@” does not look like an email address."],
            "is_dirty": true, "can_save": false, "is_saving": false, "is_new": true, "read_only": true, "error_message": nil,
            "conflicts": [], "followed": [["field": "avatar_url", "author": nil]], "removal": ["author": "alice"],
        ]
        let document = SessionDocument(["screens": [["id": "list", "kind": "list", "state": [:]], ["id": "detail", "kind": "detail", "state": state]]])
        let detail = try! #require(document.detail)
        #expect(document.showsDetail)
        #expect(detail.user == nil && detail.isNew && detail.readOnly && detail.isDirty && !detail.canSave)
        #expect(detail.dirtyFields == [.name, .email])
        #expect(detail.fieldErrors == [.email: "“ada@” does not look like an email address."])
        #expect(detail.followed.map(\.field) == [.avatarURL] && detail.followed.first?.author == nil)
        #expect(detail.removal?.author == "alice")
        #expect(detail.stored(.name) == "" && detail.draft(.avatarURL) == "")
        #expect(DetailField.avatarURL.draftAction.action == "set_draft_avatar_url" && DetailField.avatarURL.draftAction.argument == "avatar_url")
    }
}
