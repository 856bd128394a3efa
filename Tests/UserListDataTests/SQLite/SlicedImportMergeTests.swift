import Foundation
import Testing
@testable import UserListData
import UserListDomain
import ThreadLocks
import UserListTestSupport

/// The SQLite merge in slices (issue #29: another client's save waits for a slice, not for the
/// whole import). The merge is held after its first slice, deterministically, by the store's
/// test hook; slices are 10 entries, in id order. What other writes do meanwhile:
/// - a user the import does not touch, or has merged already: saved at once;
/// - a user it has not merged yet (save, add, removal): waits for the import, then runs on
///   what the import left (a save made from the old version is a conflict);
/// - an address an entry not merged yet gives another user: waits, then is refused as taken;
/// and a crash between slices resumes after the last slice committed, applying nothing twice.
@Suite struct SlicedImportMergeTests {
    static let firstID = UUID(uuidString: "00000000-0000-4000-8000-000000000001")!
    static let lastID = UUID(uuidString: "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF")!
    /// Ids the first slice cannot reach (it takes the 10 lowest of 43).
    static func lateID(_ n: Int) -> UUID { UUID(uuidString: String(format: "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFF%02X", n))! }

    /// A store with four users (`early`, merged by the first slice; `late` and `doomed`, merged
    /// by the last; `apart`, not in the import), an import staged that changes all but `apart` and adds
    /// 40 users (`added[17]` gives `wanted@example.org`; it and 25 have ids the first slice does
    /// not reach), and its commit held after slice 1.
    struct HeldImport {
        let store: SQLiteUserRepository
        let path: String
        let gate: SliceGate
        /// Beats each time a write starts waiting for the merge.
        let waits = Pulse()
        let early, late, doomed, apart: User
        let added: [User]
        let merge: Task<ImportSummary, any Error>
        let directory: TemporaryDirectory

        init() async throws {
            directory = try TemporaryDirectory()
            path = directory.file("s.sqlite")
            var options = SQLiteUserRepository.Options()
            options.mergeSliceRows = 10
            let gate = SliceGate()
            self.gate = gate
            options.afterMergeSlice = { number in await gate.reached(number) }
            options.whenAWriteWaitsForTheMerge = { [waits] in waits.beat() }
            store = try SQLiteUserRepository(path: path, options: options)
            early = try await store.add(NewUser(id: SlicedImportMergeTests.firstID, name: "Early", email: "early@example.org"))
            late = try await store.add(NewUser(id: SlicedImportMergeTests.lastID, name: "Late", email: "late@example.org"))
            doomed = try await store.add(NewUser(id: SlicedImportMergeTests.lateID(0x40), name: "Doomed", email: "doomed@example.org"))
            apart = try await store.add(NewUser(name: "Apart", email: "apart@example.org"))
            var file = SampleUsers.generate(count: 40, seed: 61)
            for index in [17, 25] {
                file[index] = User(id: SlicedImportMergeTests.lateID(index), name: file[index].name, email: file[index].email)
            }
            file[17].email = "wanted@example.org"
            added = file
            var earlyChanged = early, lateChanged = late, doomedChanged = doomed
            earlyChanged.name = "Early Imported"
            lateChanged.name = "Late Imported"
            doomedChanged.name = "Doomed Imported"
            let token = try await StagedImportTests.staged(store, [lateChanged] + file + [doomedChanged, earlyChanged], chunk: 7)
            let store = store
            let merge = Task { try await store.importStaging!.commitImport(token, by: StagedImportHistoryTests.alice) }
            self.merge = merge
            Task { _ = try? await merge.value; await gate.ended() }
            try #require(await gate.waitUntilHeld(), "the merge never reached its first slice")
        }

        /// Runs `write` in a task; whether it finished while the merge is held.
        func finishesWhileHeld<T: Sendable>(_ write: @escaping @Sendable () async throws -> T) async -> Task<T, any Error>? {
            let done = DoneFlag()
            let task = Task { defer { done.set() }; return try await write() }
            return await done.wait() ? task : nil
        }

        /// Starts `write` and returns once it waits for the import (the store counts it), with
        /// a flag set when it ends.
        func waitingForTheImport<T: Sendable>(_ write: @escaping @Sendable () async throws -> T) async throws -> (Task<T, any Error>, DoneFlag) {
            let before = store.importMerge.withLock { $0.waiting.count }
            let done = DoneFlag()
            let task = Task { defer { done.set() }; return try await write() }
            let store = store
            try #require(await waits.until { store.importMerge.withLock { $0.waiting.count } == before + 1 },
                         "the write did not wait for the import")
            return (task, done)
        }
    }

    @Test func writesOfUsersTheImportDoesNotHoldGoOnBetweenSlices() async throws {
        let held = try await HeldImport()
        #expect(try await held.store.fetchPage(PageRequest(limit: 1)).totalCount == 4 + 9, "the first slice is committed")
        var apart = held.apart
        apart.name = "Apart Renamed"
        let renamed = apart
        let store = held.store
        let saved = try #require(await held.finishesWhileHeld { try await store.update(renamed) }, "a save of another user waited for the import")
        #expect(try await saved.value.version == 2)
        // `early` was merged by the first slice: its new version can be saved from.
        let merged = try await store.fetchUser(id: held.early.id)
        #expect(merged.name == "Early Imported" && merged.version == 2)
        var early = merged
        early.name = "Early Saved After"
        let again = early
        #expect(await held.finishesWhileHeld { try await store.update(again) } != nil, "a merged user is not held")
        let newcomer = NewUser(name: "Newcomer", email: "newcomer@example.org")
        #expect(await held.finishesWhileHeld { try await store.add(newcomer) } != nil)

        await held.gate.release()
        #expect(try await held.merge.value == ImportSummary(read: 43, written: 43))
        #expect(try await store.fetchUser(id: held.early.id) == User(id: held.early.id, name: "Early Saved After", email: "early@example.org", version: 3))
        #expect(try await store.fetchUser(id: held.late.id).name == "Late Imported")
        #expect(try await store.fetchPage(PageRequest(limit: 1)).totalCount == 4 + 40 + 1)
        #expect(try StagedImportMergeTests.changeKinds(store, after: 0).filter { $0 == "reloaded" }.count == 1, "one reload for the whole import")
        await store.importRowsCleared()
        #expect(try Self.leftovers(held.path) == 0)
    }

    @Test func aWriteOfAUserNotMergedYetWaitsForTheImportAndThenMeetsItsVersion() async throws {
        let held = try await HeldImport()
        let store = held.store
        var late = held.late
        late.name = "Late Renamed Meanwhile"
        let renamed = late
        let (save, saved) = try await held.waitingForTheImport { try await store.update(renamed) }
        let doomed = held.doomed.id
        let (removal, _) = try await held.waitingForTheImport { try await store.remove(id: doomed) }
        let copy = NewUser(id: held.added[25].id, name: "Same ID", email: "same.id@example.org")
        let (add, _) = try await held.waitingForTheImport { try await store.add(copy) }
        #expect(!saved.isSet, "held while the import has not merged the user")
        #expect(try await store.fetchUser(id: held.late.id) == held.late)

        await held.gate.release()
        #expect(try await held.merge.value.written == 43)
        let imported = try await store.fetchUser(id: held.late.id)
        #expect(imported.name == "Late Imported" && imported.version == 2)
        // Made from version 1, which the import replaced: a conflict, as after any other save.
        await #expect(throws: UserError.conflict(stored: imported)) { try await save.value }
        try await removal.value  // the imported user, removed after the import
        await #expect(throws: UserError.notFound(id: held.doomed.id)) { try await store.fetchUser(id: held.doomed.id) }
        await #expect { try await add.value } throws: { error in
            guard case .conflict(let stored)? = error as? UserError else { return false }
            return stored.name == held.added[25].name
        }
    }

    @Test func anAddressAnEntryNotMergedYetGivesIsTakenByTheImportFirst() async throws {
        let held = try await HeldImport()
        let store = held.store
        let wanted = held.added[17]
        var apart = held.apart
        apart.email = "WANTED@example.org"
        let taking = apart
        let (save, _) = try await held.waitingForTheImport { try await store.update(taking) }
        await held.gate.release()
        #expect(try await held.merge.value.written == 43)
        await #expect { try await save.value } throws: { error in
            guard case .duplicateEmail(_, let other)? = error as? UserError else { return false }
            return other.id == wanted.id
        }
        #expect(try await store.fetchUser(id: held.apart.id).email == "apart@example.org")
    }

    @Test func aCrashBetweenSlicesResumesAfterTheLastSliceAndAppliesNothingTwice() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("s.sqlite")
        let stored = SampleUsers.generate(count: 30, seed: 62)
        var file = SampleUsers.generate(count: 25, seed: 63)
        do {
            let store = try SQLiteUserRepository(path: path)
            _ = try await store.importUsers(stored)
            file += stored.map { var user = $0; user.name += " Changed"; return user }
            let token = try await StagedImportTests.staged(store, file.shuffled(), chunk: 9)
            // What the daemon's commit does (its sort, all at once here), then two slices of 10,
            // then the process is gone.
            let connection = try SQLiteConnection(path: path, mode: .readWrite, busyTimeoutMilliseconds: 5_000)
            let id = try #require(Int(token.rawValue))
            let author = String(decoding: try JSONEncoder().encode(StagedImportHistoryTests.alice.via(.import)), as: UTF8.self)
            try connection.writeTransaction("test") { () throws(SQLiteError) in
                try connection.execute("UPDATE imports SET state = 'committed', author = '\(author)' WHERE id = \(id)", "test")
                try SQLiteImportMerge.begin(id, connection)
            }
            try SQLiteImportSort.fillAtOnce(id, connection)
            try SQLiteImportMerge.decide(id, accepted: true, connection)
            for _ in 0..<2 { #expect(try !SQLiteImportMerge.slice(id, rows: 10, more: { false }, connection).last) }
        }
        let reopened = try SQLiteUserRepository(path: path)
        #expect(try await reopened.fetchPage(PageRequest(limit: 1)).totalCount == 55)
        for user in stored {
            let now = try await reopened.fetchUser(id: user.id)
            #expect(now.name == user.name + " Changed" && now.version == user.version + 1, "applied once: \(now)")
        }
        for user in file.prefix(25) { #expect(try await reopened.fetchUser(id: user.id).version == 1) }
        let entries = try await reopened.history(HistoryQuery(limit: 1_000)).entries.filter { $0.author.via == .import }
        #expect(entries.count == 2, "one entry per import, the resumed one too")
        #expect(entries.first?.batch?.added == 25 && entries.first?.batch?.updated == 30, "each user counted once")
        for user in stored {
            let parts = try await reopened.history(HistoryQuery(userID: user.id)).entries
            #expect(parts.map(\.kind) == [.saved, .added] && parts[0].after?.name == user.name + " Changed")
        }
        #expect(try StagedImportMergeTests.changeKinds(reopened, after: 0).filter { $0 == "reloaded" }.count == 1)
        #expect(try Self.leftovers(path) == 0)
    }

    /// With no other write waiting, a slice goes on step after step in its one transaction.
    @Test func aSliceGoesOnInItsTransactionWhileNoOtherWriteWaits() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("s.sqlite")
        let users = SampleUsers.generate(count: 95, seed: 64)
        do {
            let store = try SQLiteUserRepository(path: path)
            let token = try await StagedImportTests.staged(store, users, chunk: 20)
            let connection = try SQLiteConnection(path: path, mode: .readWrite, busyTimeoutMilliseconds: 5_000)
            let id = try #require(Int(token.rawValue))
            try connection.writeTransaction("test") { () throws(SQLiteError) in
                try connection.execute("UPDATE imports SET state = 'committed' WHERE id = \(id)", "test")
                try SQLiteImportMerge.begin(id, connection)
            }
            try SQLiteImportSort.fillAtOnce(id, connection)
            try SQLiteImportMerge.decide(id, accepted: true, connection)
            var steps = 0
            let slice = try SQLiteImportMerge.slice(id, rows: 10, more: { steps += 1; return true }, connection)
            // Steps of 10 users first (then sized by their time): more than one, in one transaction.
            #expect(slice.last && slice.written == 95 && steps >= 1)
            #expect(try connection.integer("SELECT count(*) FROM users", "test") == 95)
            #expect(try connection.integer("SELECT user_count FROM store_state", "test") == 95)
            #expect(try connection.integer("SELECT count(*) FROM sqlite_master WHERE name LIKE 'import_guard%'", "test") == 0)
        }
        let reopened = try SQLiteUserRepository(path: path)
        #expect(try await reopened.fetchPage(PageRequest(limit: 1)).totalCount == 95)
        #expect(try StagedImportMergeTests.changeKinds(reopened, after: 0) == ["reloaded"])
        #expect(try Self.leftovers(path) == 0)
    }

    /// Rows and triggers an import leaves behind (none once it is finished).
    static func leftovers(_ path: String) throws -> Int {
        let connection = try SQLiteConnection(path: path, mode: .readOnly, busyTimeoutMilliseconds: 5_000)
        return try connection.integer("""
            SELECT (SELECT count(*) FROM imports) + (SELECT count(*) FROM import_staged) + (SELECT count(*) FROM import_merge)
                 + (SELECT count(*) FROM import_progress) + (SELECT count(*) FROM sqlite_master WHERE name LIKE 'import_guard%')
            """, "test")
    }
}

/// Holds a merge after its first slice until released, and tells the test when it is held.
actor SliceGate {
    private var held = false
    private var heldWaiters: [CheckedContinuation<Void, Never>] = []
    private var releaseWaiters: [CheckedContinuation<Void, Never>] = []
    private var released = false

    func reached(_ slice: Int) async {
        guard slice == 1, !released else { return }
        held = true
        for waiter in heldWaiters { waiter.resume() }
        heldWaiters = []
        await withCheckedContinuation { releaseWaiters.append($0) }
    }

    /// Whether the merge was held (false: it ended without a second slice, or the deadline passed).
    func waitUntilHeld() async -> Bool {
        if held { return true }
        await withCheckedContinuation { heldWaiters.append($0) }
        return held
    }

    func release() {
        released = true
        for waiter in releaseWaiters { waiter.resume() }
        releaseWaiters = []
    }

    /// The merge ended (held or not): a test waiting for it to be held stops waiting.
    func ended() {
        for waiter in heldWaiters { waiter.resume() }
        heldWaiters = []
    }
}

/// Set once a task's write has ended.
final class DoneFlag: Sendable {
    private let done = Lock(false)
    private let changed = Pulse()

    func set() {
        done.withLock { $0 = true }
        changed.beat()
    }

    var isSet: Bool { done.withLock { $0 } }

    /// Waits until it is set; false only past the generous deadline (the write never ended).
    func wait() async -> Bool { await changed.until { isSet } }
}
