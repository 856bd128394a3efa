import Foundation
import Testing
import UserListData
import UserListDomain

@Suite struct ImportExportTests {
    @Test func exportThenImportIntoAnotherStoreRoundTrips() async throws {
        let directory = try TemporaryDirectory()
        let users = SampleUsers.generate(count: 500, seed: 11)
        let source = try SQLiteUserRepository(path: directory.file("a.sqlite"))
        _ = try await source.importUsers(users)
        let exported = try source.exportJSON()

        let decoded = try JSONDecoder().decode([UserDTO].self, from: exported).map { $0.toDomain() }
        #expect(decoded == listOrder(users))

        let copy = try SQLiteUserRepository(path: directory.file("b.sqlite"))
        #expect(try await copy.importJSON(exported) == 500)
        #expect(try copy.exportJSON() == exported)
    }

    @Test func theExportIsTheRESTShape() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("a.sqlite"))
        let id = UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")!
        _ = try await store.add(NewUser(id: id, name: "Zoë \"Z\" O'Brien\\\n", email: "zoe@example.com"))
        let text = String(decoding: try store.exportJSON(), as: UTF8.self)
        #expect(text == """
            [
            {"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","full_name":"Zoë \\"Z\\" O'Brien\\\\\\n","email":"zoe@example.com","avatar_url":null,"version":1}
            ]

            """)
        let empty = try SQLiteUserRepository(path: directory.file("empty.sqlite"))
        #expect(try JSONDecoder().decode([UserDTO].self, from: empty.exportJSON()).isEmpty)
    }

    @Test func importIsAnIdempotentUpsertById() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("a.sqlite"))
        let users = SampleUsers.generate(count: 300, seed: 5)
        let json = try JSONEncoder().encode(users.map(UserDTO.init))
        #expect(try await store.importJSON(json) == 300)
        #expect(try await store.importJSON(json) == 0)  // nothing changed, nothing written
        #expect(try await store.fetchPage(PageRequest()).totalCount == 300)

        var changed = users.map(UserDTO.init)
        changed[10].fullName = "Changed Name"
        changed[10].version = 7
        let newcomer = UserDTO(id: UUID(), fullName: "New Person", email: "new@example.com", avatarURL: nil, version: 1)
        changed.append(newcomer)
        #expect(try await store.importJSON(try JSONEncoder().encode(changed)) == 2)
        #expect(try await store.fetchUser(id: users[10].id) == changed[10].toDomain())
        #expect(try await store.fetchPage(PageRequest()).totalCount == 301)
    }

    @Test func anInvalidEntryAbortsTheWholeImport() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("a.sqlite"))
        var dtos = SampleUsers.generate(count: 50).map(UserDTO.init)
        dtos[30].email = "not-an-email"
        do {
            _ = try await store.importJSON(try JSONEncoder().encode(dtos))
            Issue.record("an invalid import was accepted")
        } catch {
            guard case .validation(.email, let message)? = error as? UserError else { Issue.record("\(error)"); return }
            #expect(message.contains("Entry 31"))
        }
        #expect(try await store.fetchPage(PageRequest()).totalCount == 0)

        let reason = await unavailableReason { _ = try await store.importJSON(Data("{\"users\": 3}".utf8)) }
        #expect(reason.contains("not a JSON array of users"))
    }

    /// A big file is validated while the writer already inserts its first users: an invalid
    /// entry far into it still rolls everything back, and the first one in the file is named.
    @Test func anInvalidEntryLateInABigFileAbortsTheImportNamingTheFirst() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("late.sqlite"))
        var dtos = SampleUsers.generate(count: 60_000, seed: 33).map(UserDTO.init)
        dtos[58_000].fullName = "   "
        dtos[55_000].email = "still-not-an-email"
        do {
            _ = try await store.importJSON(try JSONEncoder().encode(dtos))
            Issue.record("an invalid import was accepted")
        } catch {
            guard case .validation(.email, let message)? = error as? UserError else { Issue.record("\(error)"); return }
            #expect(message.contains("Entry 55001"), "\(message)")
        }
        #expect(try await store.fetchPage(PageRequest()).totalCount == 0)
        dtos[58_000].fullName = "Valid Again"
        dtos[55_000].email = "valid.again@example.org"
        #expect(try await store.importJSON(try JSONEncoder().encode(dtos)) == 60_000)
        let found = try await store.fetchPage(PageRequest(limit: 5, search: "valid.again@"))
        #expect(found.users.map(\.id) == [dtos[55_000].id])
    }

    /// Imports bigger than the store (and at least 50,000 users) drop and rebuild the page and
    /// search indexes inside the transaction: they must come back, and the counts be right.
    @Test func aBigImportRebuildsTheIndexes() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteUserRepository(path: directory.file("a.sqlite"))
        let users = SampleUsers.generate(count: 50_000, seed: 31)
        #expect(try await store.importUsers(users) == 50_000)
        let plan = try store.queryPlan(SQLiteExportPageTests.pageQuery)
        #expect(plan.joined().contains("COVERING INDEX users_by_name_key"), "\(plan)")
        let emailPlan = try store.queryPlan("SELECT id FROM users WHERE email_key >= 'a' AND email_key < 'b'")
        #expect(emailPlan.joined().contains("users_by_email_key"), "\(emailPlan)")
        let ordered = listOrder(users)
        let page = try await store.fetchPage(PageRequest(after: try store.cursor(afterIndex: 29_999), limit: 100))
        #expect(page.users == Array(ordered[30_000..<30_100]))
        #expect(page.totalCount == 50_000)
    }

    @Test func sampleUsersAreDeterministicVariedAndUnique() {
        let a = SampleUsers.generate(count: 5_000, seed: 99)
        #expect(a == SampleUsers.generate(count: 5_000, seed: 99))
        #expect(a != SampleUsers.generate(count: 5_000, seed: 100))
        #expect(Set(a.map(\.id)).count == 5_000)
        #expect(Set(a.map(\.email)).count == 5_000)
        #expect(a.allSatisfy { (try? UserValidation.validEmail($0.email)) == $0.email })
        #expect(a.allSatisfy { (try? UserValidation.validName($0.name)) == $0.name })
        let scalars = a.flatMap { $0.name.unicodeScalars }
        #expect(scalars.contains { (0x4E00...0x9FFF).contains($0.value) })  // CJK
        #expect(scalars.contains { (0xAC00...0xD7AF).contains($0.value) })  // Hangul
        #expect(scalars.contains { $0.properties.isEmojiPresentation })
        #expect(scalars.contains { (0xC0...0x17F).contains($0.value) })    // accented Latin
    }
}
