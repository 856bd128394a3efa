import Foundation
import UserListDomain
import UserListPresentation
import UserListWire

/// A draft a client offers back after reattaching (`offer_draft`): the daemon lost it in a
/// crash between journal writes, or it was typed while the daemon was away.
extension Session {
    /// Taken, on that user's detail screen (opened if need be), only while the stored user is
    /// still at the version the draft was typed against; otherwise `conflict`, quoting the text,
    /// so nothing typed is dropped without a word.
    func takeOfferedDraft(id: UUID, fields: [UserField: String], baseVersion: Int) async
        -> Result<JSONValue?, IntentError> {
        let stored: User
        do throws(UserError) {
            stored = try await useCases.fetchUser.execute(id: id)
        } catch {
            return .failure(IntentError(error))
        }
        let yours = "Your unsaved " + Self.quoted(fields)
        guard stored.version == baseVersion else {
            return .failure(IntentError(.conflict, """
                \(yours) \(fields.count == 1 ? "was" : "were") typed on version \(baseVersion) of this user, which has \
                changed since (now version \(stored.version), "\(stored.name)"); not put back. \
                Type it again if you still want it.
                """))
        }
        if let open = navigator.topDetail, open.userID != id, open.state.isDirty {
            return .failure(IntentError(.conflict, "\(yours): not put back, this session now has another user's "
                                        + "unsaved edit open."))
        }
        if navigator.topDetail?.userID != id, case .failure(let error) = await navigator.openUser(id) {
            return .failure(IntentError(error))
        }
        guard let detail = navigator.topDetail, detail.userID == id else {
            return .failure(IntentError(.conflict, "\(yours): not put back, the session moved on while it was "
                                        + "offered."))
        }
        for field in UserField.allCases { if let text = fields[field] { detail.setDraft(field, text) } }
        return .success(StateDocument.user(stored))
    }

    /// `name "Ada B" and email "ada@b.example"`, in screen order.
    static func quoted(_ fields: [UserField: String]) -> String {
        UserField.allCases.compactMap { field in fields[field].map { "\(field.label) \"\($0)\"" } }
            .joined(separator: " and ")
    }
}
