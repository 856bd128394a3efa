import Foundation
import Synchronization
import Testing
import UserListTestSupport
import UserListDomain
import UserListPresentation
@testable import UserListServer
import ThreadLocks

/// The session journal on its own: what it writes comes back, its file stays bounded however
/// much is typed, and the torn tail a crash leaves is skipped.
@Suite struct SessionJournalTests {
    static func directory() throws -> String {
        let path = NSTemporaryDirectory() + "ul-journal-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func state(draft: String, rows: Int = 0) -> NavigationState {
        var list = UserListState()
        list.users = (0..<rows).map { User(id: UUID(), name: "Row \($0)", email: "row\($0)@example.com") }
        var detail = UserDetailState(userID: UUID(uuidString: "00000000-0000-4000-8000-000000000001")!)
        detail.draftName = draft
        return NavigationState(screens: [.list(list), .detail(detail)])
    }

    static func draft(_ saved: SavedSession?) -> String? {
        guard case .detail(let detail)? = saved?.state.screens.last else { return nil }
        return detail.draftName
    }

    /// A logger for a journal under test, and a pulse that beats after each line it logs (the
    /// journal logs one after every batch it writes).
    static func observedLogger() -> (Logger, Pulse) {
        let logged = Pulse()
        return (Logger(sink: .observed { _ in logged.beat() }, level: .debug), logged)
    }

    /// Waits until the journal on disk holds `draft` for `key`, looking after each batch written.
    static func waitForDraft(_ draft: String, key: SessionKey, in directory: String, written: Pulse) async -> Bool {
        let reader = Logger(sink: .memory, level: .error)
        return await written.until {
            let loaded = SessionJournal.load(directory: directory, logger: reader) ?? []
            return Self.draft(loaded.first { $0.key == key }) == draft
        }
    }

    @Test func theLatestStateComesBackAndTheFileStaysBounded() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (logger, written) = Self.observedLogger()
        let journal = SessionJournal(directory: directory, interval: .milliseconds(1), logger: logger)
        journal.start(with: [])
        let key = SessionKey(uid: 1000, clientKey: "typist")
        let other = SessionKey(uid: 1000, clientKey: "reader")
        journal.record(key: other, id: "reader", state: Self.state(draft: "Unchanged"), client: nil)
        // 24 drafts of 64 KiB each: 1.5 MiB typed, against one live session of 64 KiB.
        let filler = String(repeating: "x", count: 64 * 1024)
        for round in 0..<24 {
            let draft = "\(round) " + filler
            journal.record(key: key, id: "typist", state: Self.state(draft: draft, rows: 50), client: nil)
            #expect(await Self.waitForDraft(draft, key: key, in: directory, written: written),
                    "round \(round) reached the disk")
        }
        let size = try FileManager.default.attributesOfItem(atPath: journal.path)[.size] as? Int ?? 0
        #expect(size <= 2 << 20, "the journal stays bounded (compacted past 4 × the live size, at least 1 MiB): \(size) bytes")
        let loaded = SessionJournal.load(directory: directory, logger: logger) ?? []
        #expect(loaded.count == 2)
        #expect(Self.draft(loaded.first { $0.key == other }) == "Unchanged", "a session written once survives compaction")
        // The list's rows are not journaled: a restore reloads them, as many as were read.
        if case .list(let list)? = loaded.first(where: { $0.key == key })?.state.screens.first {
            #expect(list.users.isEmpty)
        }
        #expect(loaded.first { $0.key == key }?.listWindow == UserListWindow(rows: 50, fromEnd: false))
        journal.finish()
    }

    /// A stop right after a start: the shutdown waits for the start's cleanup (which removes the
    /// previous run's `sessions.json`) before it writes its own, however late the journal's
    /// low-priority thread runs it. Here the cleanup is held until the shutdown has waited a
    /// while; a shutdown that did not wait would come back while it is still held.
    @Test func aShutdownWaitsForTheStartsCleanupBeforeItSaves() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = SessionJournal(directory: directory, interval: .milliseconds(1), logger: Logger(sink: .memory, level: .error))
        let release = DispatchSemaphore(value: 0)
        let cleanedUp = Atomic<Bool>(false)
        journal.start(with: []) {
            release.wait()
            cleanedUp.store(true, ordering: .sequentiallyConsistent)
        }
        let shutdownSawCleanup = Lock<Bool?>(nil)
        let shutdownReturned = Pulse()
        let shutdown = Thread {
            journal.waitUntilStarted()
            shutdownSawCleanup.withLock { $0 = cleanedUp.load(ordering: .sequentiallyConsistent) }
            shutdownReturned.beat()
        }
        shutdown.start()
        // Not an outcome-deciding wait: a shutdown that does not wait returns within it and is
        // caught below; one that waits is released after it.
        await shutdownReturned.until(timeout: .milliseconds(300)) { shutdownSawCleanup.withLock { $0 } != nil }
        release.signal()
        await shutdownReturned.until { shutdownSawCleanup.withLock { $0 } != nil }
        #expect(shutdownSawCleanup.withLock { $0 } == true, "the shutdown went on only after the start's cleanup")
        journal.abandon()
        #expect(!FileManager.default.fileExists(atPath: journal.path), "abandon removes the journal")
    }

    /// How far the list was read is worth a journal write when a page more or less would be
    /// read back, not for every row a change adds or removes.
    @Test func aPageMoreOfTheListIsARestoreChangeARowIsNot() {
        func state(rows: Int, fromEnd: Bool = false) -> NavigationState {
            var list = UserListState()
            list.users = (0..<rows).map { User(id: UUID(), name: "Row \($0)", email: "row\($0)@example.com") }
            list.hasPrevious = fromEnd
            return NavigationState(screens: [.list(list)])
        }
        #expect(SessionJournal.restoreChanged(from: state(rows: 50), to: state(rows: 100)))
        #expect(SessionJournal.restoreChanged(from: state(rows: 100), to: state(rows: 100, fromEnd: true)))
        #expect(!SessionJournal.restoreChanged(from: state(rows: 60), to: state(rows: 70)))
        #expect(!SessionJournal.restoreChanged(from: state(rows: 100), to: state(rows: 99)))
    }

    /// The client name a session's writes are recorded with is journaled with its state, so a
    /// restore after a crash records them so again; a client attaching under another name
    /// replaces it, with no change of screens to carry it.
    @Test func theClientNameIsJournaledAndAnAttachUnderAnotherNameReplacesIt() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (logger, written) = Self.observedLogger()
        let journal = SessionJournal(directory: directory, interval: .milliseconds(1), logger: logger)
        journal.start(with: [])
        let key = SessionKey(uid: 1000, clientKey: "renamed")
        func journaledClient() -> String? {
            let reader = Logger(sink: .memory, level: .error)
            return SessionJournal.load(directory: directory, logger: reader)?.first { $0.key == key }?.client
        }
        journal.record(key: key, id: "renamed", state: Self.state(draft: "Draft"), client: "userctl 1.0")
        #expect(await written.until { journaledClient() == "userctl 1.0" })
        journal.attachmentChanged(key: key, detachedAt: nil, client: "userctl 1.1")
        #expect(await written.until { journaledClient() == "userctl 1.1" })
        journal.finish()
    }

    @Test func aTornLastLineIsSkipped() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (logger, written) = Self.observedLogger()
        let journal = SessionJournal(directory: directory, interval: .milliseconds(1), logger: logger)
        journal.start(with: [])
        let key = SessionKey(uid: 1000, clientKey: "crash")
        journal.record(key: key, id: "crash", state: Self.state(draft: "Complete Line"), client: nil)
        #expect(await Self.waitForDraft("Complete Line", key: key, in: directory, written: written))
        journal.finish()
        // A crash in the middle of the next write.
        let handle = try #require(FileHandle(forWritingAtPath: journal.path))
        handle.seekToEndOfFile()
        handle.write(Data("{\"session\":{\"key\":{\"uid\":1000,\"clientKey\":\"crash\"},\"id\":\"cr".utf8))
        try handle.close()
        let loaded = try #require(SessionJournal.load(directory: directory, logger: logger))
        #expect(loaded.count == 1 && Self.draft(loaded.first) == "Complete Line")
        #expect(loaded.first?.detachedAt != nil, "a session attached at the crash counts as detached from then")
    }
}
