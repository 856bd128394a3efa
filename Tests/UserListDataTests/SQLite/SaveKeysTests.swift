import CSQLite
import Foundation
import Testing
@testable import UserListData
import UserListDomain

/// A save names only the keys that change in its UPDATE (`SQLiteUserRepository+Save`): whatever
/// a save changes, the stored row, its keys, the indexes, the search index and the history entry
/// are what the old one-text UPDATE left.
@Suite struct SaveKeysTests {
    private let author = ChangeAuthor(uid: 1001, userName: "alice", via: .intent)

    /// Saves `change` applied to a stored Ada, then checks everything the save touches.
    private func check(_ label: String, _ change: (inout User) -> Void,
                       searchFinds: [String], searchMisses: [String]) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("save.sqlite")
        let store = try SQLiteUserRepository(path: path)
        let ada = try await store.add(NewUser(name: "Ada Lovelace", email: "ada@example.com", avatarURL: "https://a/1"), by: author)
        _ = try await store.add(NewUser(name: "Grace Hopper", email: "grace@example.com"), by: author)
        var edited = ada
        change(&edited)
        let saved = try await store.update(edited, by: author)

        #expect(saved.version == 2, "\(label)")
        let stored = try await store.fetchUser(id: ada.id)
        #expect(Array(stored.name.utf8) == Array(edited.name.utf8), "\(label): the name's bytes as given")
        #expect(Array(stored.email.utf8) == Array(edited.email.utf8), "\(label): the email's bytes as given")
        #expect(stored.avatarURL == edited.avatarURL && stored.version == 2, "\(label)")
        for term in searchFinds {
            #expect(try await store.fetchPage(PageRequest(search: term)).users.map(\.id) == [ada.id], "\(label): search \(term)")
        }
        for term in searchMisses {
            #expect(try await store.fetchPage(PageRequest(search: term)).users.isEmpty, "\(label): search \(term)")
        }
        let page = try await store.history(HistoryQuery(userID: ada.id, limit: 10))
        let entry = try #require(page.entries.first, "\(label)")
        #expect(entry.kind == .saved && entry.author == author && entry.versionAfter == 2, "\(label)")
        #expect(entry.before == UserFields(ada) && entry.after == UserFields(edited), "\(label)")

        // The keys are the ones the old UPDATE wrote, and every index agrees with the table.
        var db: OpaquePointer?
        #expect(sqlite3_open(path, &db) == SQLITE_OK)
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        let sql = "SELECT name_key, email_key, (SELECT group_concat(integrity_check) FROM pragma_integrity_check) FROM users WHERE id = ?1"
        #expect(sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK)
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_text(statement, 1, ada.id.uuidString.uppercased(), -1, nil)
        #expect(sqlite3_step(statement) == SQLITE_ROW)
        #expect(String(cString: sqlite3_column_text(statement, 0)) == UserKey.fold(edited.name), "\(label)")
        #expect(String(cString: sqlite3_column_text(statement, 1)) == UserKey.fold(edited.email), "\(label)")
        #expect(String(cString: sqlite3_column_text(statement, 2)) == "ok", "\(label)")
    }

    @Test func aRenameAlone() async throws {
        try await check("rename", { $0.name = "Augusta King" }, searchFinds: ["augusta", "ada@ex"], searchMisses: ["lovelace"])
    }

    @Test func anEmailAlone() async throws {
        try await check("email", { $0.email = "countess@example.org" }, searchFinds: ["countess", "lovelace"], searchMisses: ["ada@"])
    }

    @Test func anEmailInAnotherCaseKeepsItsKeyAndStoresTheNewBytes() async throws {
        try await check("email case", { $0.email = "ADA@Example.com" }, searchFinds: ["ada@ex"], searchMisses: [])
    }

    @Test func aNameInAnotherCaseKeepsItsKeyAndStoresTheNewBytes() async throws {
        try await check("name case", { $0.name = "ADA LOVELACE" }, searchFinds: ["lovelace"], searchMisses: [])
    }

    /// A decomposed "é" is `==` to a composed one in Swift but not in SQLite: the new bytes are stored.
    @Test func anotherUnicodeFormOfTheSameEmailStoresTheNewBytes() async throws {
        try await check("email form", { $0.email = "ada@exampl\u{E9}.com"; $0.name = "Ada" },
                        searchFinds: ["ada@"], searchMisses: ["lovelace"])
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("forms.sqlite"))
        let composed = try await store.add(NewUser(name: "\u{E9}mile", email: "\u{E9}mile@example.com"), by: author)
        var decomposed = composed
        decomposed.email = "e\u{301}mile@example.com"
        #expect(decomposed.email == composed.email)  // the point: Swift calls them equal
        _ = try await store.update(decomposed, by: author)
        #expect(Array(try await store.fetchUser(id: composed.id).email.utf8) == Array(decomposed.email.utf8))
    }

    @Test func anAvatarAloneAndNothingAtAll() async throws {
        try await check("avatar", { $0.avatarURL = "https://a/2" }, searchFinds: ["lovelace", "ada@ex"], searchMisses: [])
        // Nothing at all is no save (issue 46 item 5): the stored user back, no version, no entry.
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("same.sqlite"))
        let ada = try await store.add(NewUser(name: "Ada Lovelace", email: "ada@example.com", avatarURL: "https://a/1"), by: author)
        #expect(try await store.update(ada, by: author) == ada)
        #expect(try await store.fetchUser(id: ada.id) == ada)
        #expect(try await store.history(HistoryQuery(userID: ada.id)).entries.map(\.kind) == [.added])
    }

    @Test func everything() async throws {
        try await check("all", { $0.name = "Augusta King"; $0.email = "countess@example.org"; $0.avatarURL = nil },
                        searchFinds: ["augusta", "countess"], searchMisses: ["lovelace", "ada@"])
    }

    /// A stale version is a conflict naming what is stored, and records nothing; a taken email is
    /// refused naming its owner, and records nothing either.
    @Test func aConflictAndADuplicateEmailWriteNothing() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("refused.sqlite"))
        let ada = try await store.add(NewUser(name: "Ada Lovelace", email: "ada@example.com"), by: author)
        let grace = try await store.add(NewUser(name: "Grace Hopper", email: "grace@example.com"), by: author)
        var renamed = ada
        renamed.name = "Augusta King"
        let stored = try await store.update(renamed, by: author)
        var stale = ada
        stale.name = "Someone Else"
        await #expect(throws: UserError.conflict(stored: stored)) { _ = try await store.update(stale, by: author) }
        var taken = stored
        taken.email = "GRACE@example.com"
        await #expect(throws: UserError.duplicateEmail(email: "GRACE@example.com", other: grace)) {
            _ = try await store.update(taken, by: author)
        }
        let missing = User(id: UUID(), name: "Nobody", email: "nobody@example.com")
        await #expect(throws: UserError.notFound(id: missing.id)) { _ = try await store.update(missing, by: author) }
        let entries = try await store.history(HistoryQuery(userID: ada.id, limit: 10)).entries
        #expect(entries.map(\.kind) == [.saved, .added])
        #expect(try await store.fetchUser(id: ada.id) == stored)
    }
}
