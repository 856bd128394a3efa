import Foundation
import UserListDomain

/// What a save reads of the stored row before it writes (`update(_:by:)`), and the UPDATE it
/// then runs.
///
/// Why read first: the history entry needs the row as it was, and the conflict check needs its
/// version; one point read serves both (the entry used to be an `INSERT ... SELECT` from
/// `users`, a second lookup of the same row). And why the UPDATE's text depends on what changed:
/// SQLite rewrites an index entry whenever the UPDATE names one of the index's columns, equal
/// value or not. The save used to name `email_key` always (as `CASE WHEN email = ?2 THEN
/// email_key ELSE ?5 END`), so a rename rewrote its entry in `users_by_email_key`: one more
/// page in the WAL at every commit (a rename wrote 11.3 frames before history, 14.7 with it,
/// 13.7 once only the changed keys are named: `scripts/save-transaction.py`; the runs are in
/// BENCHMARKS.md's git history).
/// The values written are the ones the old statement wrote.
extension SQLiteUserRepository {
    struct SaveRead {
        /// The stored user.
        let user: User
        /// `fold(name)` of the user being saved, and whether it differs from the stored key.
        let newNameKey: String
        let nameKeyChanged: Bool
        /// Whether the email differs byte for byte (SQLite's `email = ?2` compares bytes; Swift's
        /// `==` would call a decomposed "é" equal to a composed one and leave the old bytes).
        let emailChanged: Bool

        /// Whether saving `user` would store exactly what is stored: compared as bytes, as
        /// SQLite's `IS NOT` would (a decomposed "é" is a change from a composed one).
        func changesNothing(_ user: User) -> Bool {
            !emailChanged && Self.sameBytes(self.user.name, user.name)
                && Self.sameBytes(self.user.avatarURL, user.avatarURL)
        }

        static func sameBytes(_ a: String?, _ b: String?) -> Bool {
            switch (a, b) {
            case (nil, nil): true
            case (let a?, let b?): a.utf8.elementsEqual(b.utf8)
            default: false
            }
        }
    }

    /// The stored row of `user.id` (nil: none), compared with `user`.
    static func readForSave(_ user: User, _ connection: SQLiteConnection) throws(SQLiteError) -> SaveRead? {
        let statement = try connection.statement(readForSaveText)
        defer { statement.reset() }
        statement.bind(1, user.id)
        guard try statement.step("saving a user") else { return nil }
        let nameKey = UserKey.fold(user.name)
        return SaveRead(user: Self.user(from: statement), newNameKey: nameKey,
                        nameKeyChanged: !statement.bytes(5).elementsEqual(nameKey.utf8),
                        emailChanged: !statement.bytes(2).elementsEqual(user.email.utf8))
    }

    private static let readForSaveText = "SELECT \(columns), name_key FROM users WHERE id = ?1"

    /// The UPDATE for `read`: `?1` name, `?2` email, `?3` avatar_url, `?4` name_key, `?5`
    /// email_key (bound only when the email changed), `?6` id, `?7` the version saved from.
    /// `name_key` is named only when it changes, `email_key` only when the email does (an
    /// unchanged email keeps its stored key: a duplicate from before v4 keeps its suffixed key,
    /// so renaming that user still works; see SQLiteSchema.v4).
    static func saveStatement(_ read: SaveRead) -> String {
        switch (read.nameKeyChanged, read.emailChanged) {
        case (true, true): saveBothKeys
        case (true, false): saveNameKey
        case (false, true): saveEmailKey
        case (false, false): saveNoKey
        }
    }

    // A parameter a text leaves out (`?4`, `?5`) can still be bound: SQLite numbers the
    // parameters up to the highest `?N` in the text, `?7` in each.
    private static let saveBothKeys = """
        UPDATE users SET name = ?1, email = ?2, avatar_url = ?3, name_key = ?4, email_key = ?5, version = version + 1
        WHERE id = ?6 AND version = ?7
        """
    private static let saveNameKey = """
        UPDATE users SET name = ?1, email = ?2, avatar_url = ?3, name_key = ?4, version = version + 1
        WHERE id = ?6 AND version = ?7
        """
    private static let saveEmailKey = """
        UPDATE users SET name = ?1, email = ?2, avatar_url = ?3, email_key = ?5, version = version + 1
        WHERE id = ?6 AND version = ?7
        """
    private static let saveNoKey = """
        UPDATE users SET name = ?1, email = ?2, avatar_url = ?3, version = version + 1
        WHERE id = ?6 AND version = ?7
        """
}
