import CSQLite
import Foundation
import Testing
@testable import UserListData
import UserListDomain

/// The store sorts and searches by the Domain's TextKey, and keeps emails unique regardless of case.
@Suite struct TextKeyAndUniqueEmailTests {
    private func user(_ name: String, _ email: String) -> User {
        User(id: UUID(), name: name, email: email)
    }

    @Test func precomposedAndDecomposedNamesSortAndSearchAsOne() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("keys.sqlite"))
        let precomposed = user("\u{E9}mile Zola", "emile1@example.com")     // é as one scalar
        let decomposed = user("e\u{301}mile Roy", "elodie@example.com")     // e + combining acute
        let zed = user("Zed Shaw", "zed@example.com")
        let dave = user("Dave Null", "dave@example.com")
        _ = try await store.importUsers([zed, precomposed, decomposed, dave])

        let names = try await store.fetchPage(PageRequest(limit: 10)).users.map(\.id)
        // "é" sorts with "e", between "d" and "z", in either form.
        #expect(names == [dave.id, decomposed.id, precomposed.id, zed.id])

        for search in ["\u{E9}mi", "e\u{301}mi", "EMI", "ÉMI"] {
            let found = Set(try await store.fetchPage(PageRequest(limit: 10, search: search)).users.map(\.id))
            #expect(found == [precomposed.id, decomposed.id], "search \(search.unicodeScalars.map { $0.value })")
        }
    }

    @Test func turkishGermanAndCJKNamesSortAndSearch() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("keys.sqlite"))
        let istanbul = user("İlkay Gündoğan", "ilkay@example.com")
        let ivan = user("Ivan Ilyich", "ivan@example.com")
        let strasse = user("Straße Meier", "meier@example.com")
        let stras = user("Strasser Anna", "anna@example.com")
        let yamada = user("山田太郎", "yamada@example.com")
        let yamaguchi = user("山口", "yamaguchi@example.com")
        _ = try await store.importUsers([yamada, strasse, istanbul, yamaguchi, stras, ivan])

        let order = try await store.fetchPage(PageRequest(limit: 10)).users.map(\.name)
        // "ilkay" < "ivan" < "strasse meier" < "strasser anna" < CJK (by code point: 山口 < 山田).
        #expect(order == ["İlkay Gündoğan", "Ivan Ilyich", "Straße Meier", "Strasser Anna", "山口", "山田太郎"])

        // Substring search: "il" is in "İlkay" (dotted İ folds to i) and in "Ivan Ilyich".
        #expect(Set(try await store.fetchPage(PageRequest(search: "il")).users.map(\.id)) == [istanbul.id, ivan.id])
        #expect(Set(try await store.fetchPage(PageRequest(search: "İL")).users.map(\.id)) == [istanbul.id, ivan.id])
        #expect(Set(try await store.fetchPage(PageRequest(search: "strass")).users.map(\.id)) == [strasse.id, stras.id])
        // "ß" is "ss": a search for "STRAßE" is a search for "strasse", which both names start with.
        #expect(Set(try await store.fetchPage(PageRequest(search: "STRAßE")).users.map(\.id)) == [strasse.id, stras.id])
        #expect(try await store.fetchPage(PageRequest(search: "straße m")).users.map(\.id) == [strasse.id])
        #expect(try await store.fetchPage(PageRequest(search: "山田")).users.map(\.id) == [yamada.id])
        #expect(Set(try await store.fetchPage(PageRequest(search: "山")).users.map(\.id)) == [yamada.id, yamaguchi.id])
    }

    @Test func aSecondUserWithTheSameEmailInAnyCaseIsRefusedNamingTheFirst() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("emails.sqlite"))
        let ada = try await store.add(NewUser(name: "Ada Lovelace", email: "ada@example.com"))
        do {
            _ = try await store.add(NewUser(name: "Impostor", email: "ADA@Example.com"))
            Issue.record("a duplicate email was added")
        } catch {
            #expect(error == .duplicateEmail(email: "ADA@Example.com", other: ada))
            #expect(error.message.contains("Ada Lovelace"))
        }
        // Changing another user's email to a taken one is refused the same way, and nothing changes.
        let grace = try await store.add(NewUser(name: "Grace Hopper", email: "grace@example.com"))
        var edited = grace
        edited.email = "Ada@example.com"
        await #expect(throws: UserError.duplicateEmail(email: "Ada@example.com", other: ada)) { _ = try await store.update(edited) }
        #expect(try await store.fetchUser(id: grace.id) == grace)
        #expect(try await store.fetchPage(PageRequest(limit: 10)).totalCount == 2)
        // A user may keep (or re-case) their own address.
        var recased = ada
        recased.email = "ADA@example.com"
        #expect(try await store.update(recased).email == "ADA@example.com")
    }

    @Test func anImportWithADuplicateEmailWritesNothing() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("import.sqlite"))
        let existing = try await store.add(NewUser(name: "Ada Lovelace", email: "ada@example.com"))
        let fresh = user("Grace Hopper", "grace@example.com")
        let clash = user("Ada Impostor", "Ada@Example.COM")
        do {
            _ = try await store.importUsers([fresh, clash])
            Issue.record("the import was accepted")
        } catch {
            #expect(error == .duplicateEmail(email: clash.email, other: existing))
        }
        #expect(try await store.fetchPage(PageRequest(limit: 10)).users == [existing], "nothing of the import was written")

        // Two entries of one file sharing an address: refused too.
        let twin = user("Grace Twin", "GRACE@example.com")
        await #expect(throws: UserError.self) { _ = try await store.importUsers([fresh, twin]) }
        #expect(try await store.fetchPage(PageRequest(limit: 10)).users == [existing])
    }

    @Test func aBigImportWithADuplicateEmailIsRefusedWhenItsIndexIsRebuiltAndWritesNothing() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("big.sqlite"))
        var users = SampleUsers.generate(count: SQLiteUserRepository.rebuildIndexesFrom, seed: 5)
        users[users.count - 1].email = users[0].email.uppercased()
        do {
            _ = try await store.importUsers(users)
            Issue.record("the import was accepted")
        } catch {
            guard case .duplicateEmail = error else {
                Issue.record("expected duplicateEmail, got \(error)")
                return
            }
        }
        #expect(try await store.fetchPage(PageRequest(limit: 1)).totalCount == 0)
        // The indexes are back: the store still refuses duplicates and still serves pages.
        _ = try await store.add(NewUser(name: "Ada", email: "ada@example.com"))
        await #expect(throws: UserError.self) { _ = try await store.add(NewUser(name: "Ada 2", email: "ADA@example.com")) }
    }

    /// A file written by version 3 (keys lowercased, duplicate emails allowed) is migrated:
    /// keys recomputed, both duplicates kept, the later one still editable.
    @Test func aVersion3FileWithDuplicateEmailsIsMigrated() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("v3.sqlite")
        var db: OpaquePointer?
        #expect(sqlite3_open(path, &db) == SQLITE_OK)
        let first = UUID(), second = UUID(), zed = UUID()
        let v2 = SQLiteSchema.v2.replacingOccurrences(of: "userlist_fold(", with: "lower(")
        let sql = SQLiteSchema.v1 + v2 + SQLiteSchema.v3 + """
            INSERT INTO users (id, name, email, avatar_url, version, name_key, email_key) VALUES
                ('\(first.uuidString)', 'E\u{301}mile One', 'emile@example.com', NULL, 1, 'e\u{301}mile one', 'emile@example.com'),
                ('\(second.uuidString)', 'Émile Two', 'EMILE@example.com', NULL, 1, 'émile two', 'emile@example.com'),
                ('\(zed.uuidString)', 'Zed', 'zed@example.com', NULL, 1, 'zed', 'zed@example.com');
            PRAGMA user_version = 3;
            """
        #expect(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK, "\(String(cString: sqlite3_errmsg(db)))")
        sqlite3_close(db)

        let store = try SQLiteUserRepository(path: path)
        let page = try await store.fetchPage(PageRequest(limit: 10))
        #expect(page.users.map(\.id) == [first, second, zed], "both forms of É sort as e, before z")
        #expect(Set(try await store.fetchPage(PageRequest(search: "emile@")).users.map(\.id)) == [first, second])
        // The later duplicate can still be renamed...
        var renamed = try await store.fetchUser(id: second)
        renamed.name = "Émile Deux"
        #expect(try await store.update(renamed).name == "Émile Deux")
        // ...and given an address of its own; a new duplicate is refused.
        var fixed = try await store.fetchUser(id: second)
        fixed.email = "emile2@example.com"
        _ = try await store.update(fixed)
        await #expect(throws: UserError.self) { _ = try await store.add(NewUser(name: "Third", email: "Emile@Example.com")) }
        await #expect(throws: UserError.self) { _ = try await store.add(NewUser(name: "Fourth", email: "EMILE2@example.com")) }
    }
}
