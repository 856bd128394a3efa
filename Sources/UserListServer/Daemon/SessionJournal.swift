import Dispatch
import Foundation
import Glibc
import Synchronization
import UserListDomain
import UserListPresentation
import ThreadLocks

/// Sessions written to the state directory as they change, so a crash (kill -9, power loss)
/// loses at most the last `interval` of a session's screens and drafts.
///
/// Off the intent's path: a session's flush only hands its new state over (`record`: a lock and
/// a dictionary store). A serial writer queue (a thread of its own at the lowest priority, a
/// `JobThread` with `.idle`, not one of Swift's cooperative threads, because it blocks in
/// `fdatasync` and must not take CPU from a session that wants it) wakes at most every `interval`,
/// reduces each changed state to what a restore uses (the stack, the list's search, the detail
/// screen with its draft; not the list's rows, which a restore reloads anyway), and appends those
/// that differ from what it last wrote as JSON lines to `sessions.journal`, with one `fdatasync` for the
/// batch. So a session whose list merely follows other people's saves costs a comparison, not a
/// write. Ended sessions get a tombstone line. The file is compacted (every live session written
/// aside, synced, renamed over it) once it passes four times the live size (at least 1 MiB), so
/// it stays bounded. Under a CPU saturated for long, the writer's thread runs later (it still
/// gets a small share), so a kill -9 at such a time may lose more than the interval's typing.
package final class SessionJournal: Sendable {
    package static let fileName = "sessions.journal"

    private struct Pending {
        var states: [SessionKey: (id: String, state: NavigationState, client: String?)] = [:]
        /// When a session's last client left (nil: a client is attached now).
        var detachments: [SessionKey: Date?] = [:]
        /// The name an attaching client's hello gave (its session's writes are recorded with it).
        var clients: [SessionKey: String] = [:]
        var scheduled = false
    }

    /// What the writer last wrote for a session.
    private struct Entry {
        var saved: SavedSession
        var bytes: Int
    }

    /// The writer's own state, touched only on `queue` (see `writer`).
    private final class WriterState {
        var fd: Int32 = -1
        var fileBytes = 0
        var live: [SessionKey: Entry] = [:]
        var lastReconcile = ContinuousClock.now
        var reconcileScheduled = false
        var failedBefore = false
        /// After `finish`: the clean shutdown's save takes over; nothing more is written.
        var finished = false
    }

    package let directory: String
    package var path: String { directory + "/" + Self.fileName }
    private let interval: Duration
    private let logger: Logger
    private let pending = Lock(Pending())
    private let queue = JobThread(name: "ul-journal", priority: .idle)
    /// The writer's state: the queue's thread's alone.
    private let writerState: Confined<WriterState>
    private var writer: WriterState { writerState.value }
    /// Set by `abandon`: nothing more is written.
    private let abandoned = Atomic<Bool>(false)
    /// Entered by `start` until its work (and its `then`) is done.
    private let starting = DispatchGroup()
    /// The keys of the sessions that exist now: sessions the registry ended (retention, `bye`,
    /// eviction) are missing from it and get their tombstone.
    private let liveKeys = Lock<(@Sendable () -> Set<SessionKey>)?>(nil)

    package init(directory: String, interval: Duration, logger: Logger) {
        self.directory = directory
        self.interval = interval
        self.logger = logger
        writerState = Confined(WriterState(), to: .thread(queue))
    }

    /// The writer's thread ends once the jobs queued (each of which holds the journal) have run.
    deinit { queue.finish() }

    /// Tells the journal which sessions exist (the registry's keys); asked every few seconds.
    package func setLiveKeys(_ keys: @escaping @Sendable () -> Set<SessionKey>) {
        liveKeys.withLock { $0 = keys }
    }

    // MARK: the sessions' side (cheap, any thread)

    /// A session's state changed; written within `interval`. `client`: the name its writes are
    /// recorded with, kept so that they still are after a crash.
    package func record(key: SessionKey, id: String, state: NavigationState, client: String?) {
        schedule { $0.states[key] = (id, state, client) }
    }

    /// A session's last client left (`detachedAt`), or a client attached (nil): retention
    /// after a crash counts from the detach. `client`: the attaching client's name, when its
    /// hello gave one that the session's writes are now recorded with.
    package func attachmentChanged(key: SessionKey, detachedAt: Date?, client: String? = nil) {
        schedule { pending in
            pending.detachments[key] = .some(detachedAt)
            if let client { pending.clients[key] = client }
        }
    }

    private func schedule(_ change: (inout Pending) -> Void) {
        let first = pending.withLock { pending -> Bool in
            change(&pending)
            defer { pending.scheduled = true }
            return !pending.scheduled
        }
        guard first else { return }
        queue.async(after: interval) { [self] in writeBatch() }
    }

    // MARK: start and stop

    /// Starts a fresh journal holding `sessions` (those just restored), written aside, synced
    /// and renamed into place on the writer queue (off the start-up path); `then` runs there
    /// once it is (the caller removes the files the sessions came from). Changes recorded
    /// meanwhile are written after it.
    package func start(with sessions: [SavedSession], then: @escaping @Sendable () -> Void = {}) {
        starting.enter()
        queue.async { [self] in
            defer {
                then()
                starting.leave()
            }
            writer.live = [:]
            for session in sessions {
                let saved = SavedSession(key: session.key, id: session.id, state: Self.reduced(session.state),
                                         detachedAt: session.detachedAt ?? Date(), listWindow: session.listWindow,
                                         client: session.client)
                writer.live[session.key] = Entry(saved: saved, bytes: 0)
            }
            compact()
        }
    }

    /// Writes what is pending and closes the file (a clean shutdown whose full save failed).
    package func finish() {
        queue.sync { [self] in
            writeBatch()
            if writer.fd >= 0 { Glibc.close(writer.fd) }
            writer.fd = -1
            writer.finished = true
        }
    }

    /// Removes the journal and stops writing it: the clean shutdown's `sessions.json` holds
    /// everything now. Does not wait for the writer's thread, which runs at the lowest priority:
    /// a busy machine may not run it for a while, and a restart's clients would wait with it.
    /// A batch the writer is in the middle of goes to the removed file; a compaction that renames
    /// its file into place after this leaves a journal that the next start ignores
    /// (`sessions.json` comes first) and then replaces.
    package func abandon() {
        abandoned.store(true, ordering: .sequentiallyConsistent)
        unlink(path)
    }

    /// Waits until `start` has done its work, its `then` included. A shutdown calls it before
    /// writing `sessions.json`: `start`'s `then` removes the previous run's file, and on a
    /// busy machine the writer's low-priority thread may not have run it yet when a stop comes
    /// right after a start; it must not remove the file this shutdown writes.
    package func waitUntilStarted() {
        starting.wait()
    }

    // MARK: reading back

    /// The sessions a journal at `directory` holds, or nil when there is none. A session whose
    /// last line says a client was attached counts as detached when the journal was last
    /// written (the crash). An unreadable line (the torn tail of a crash) is skipped.
    package static func load(directory: String, logger: Logger) -> [SavedSession]? {
        let path = directory + "/" + fileName
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let lastWrite = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? Date()
        var sessions: [SessionKey: SavedSession] = [:]
        var order: [SessionKey] = []
        var unreadable = 0
        let decoder = JSONDecoder()
        for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            guard let decoded = Line(fast: line) ?? (try? decoder.decode(Line.self, from: Data(line))) else {
                unreadable += 1
                continue
            }
            if let saved = decoded.session {
                if sessions[saved.key] == nil { order.append(saved.key) }
                sessions[saved.key] = saved
            } else if let ended = decoded.ended {
                sessions[ended] = nil
            }
        }
        if unreadable > 0 {
            logger.warning("Skipped \(unreadable) unreadable line\(unreadable == 1 ? "" : "s") of \(path) "
                           + "(a write cut short by a crash)")
        }
        let restored = order.compactMap { key in
            sessions[key].map {
                SavedSession(key: $0.key, id: $0.id, state: $0.state, detachedAt: $0.detachedAt ?? lastWrite,
                             listWindow: $0.listWindow, client: $0.client)
            }
        }
        logger.info("Read \(restored.count) sessions from the journal \(path)")
        return restored
    }

    /// Whether what a restore uses differs between two states (the stack, the list's search and
    /// how many pages of it were read, the detail screen): cheap enough for the session's flush,
    /// which skips `record` otherwise.
    static func restoreChanged(from old: NavigationState?, to new: NavigationState) -> Bool {
        guard let old, old.screens.count == new.screens.count else { return true }
        for (before, after) in zip(old.screens, new.screens) {
            switch (before, after) {
            case (.list(let a), .list(let b)): if restoreChanged(fromList: a, toList: b) { return true }
            case (.detail(let a), .detail(let b)): if a != b { return true }
            default: return true
            }
        }
        return false
    }

    /// Whether a list moved to another search, or a page further or nearer.
    static func restoreChanged(fromList a: UserListState, toList b: UserListState) -> Bool {
        a.search != b.search
            || UserListWindow(of: a).differsByAPage(from: UserListWindow(of: b),
                                                    pageSize: FetchUserPageUseCase.defaultPageSize)
    }

    /// How far the list of `state` was read, for a restore to read as far again.
    static func listWindow(of state: NavigationState) -> UserListWindow? {
        guard case .list(let list) = state.screens.first else { return nil }
        return UserListWindow(of: list)
    }

    /// What a restore uses of a state: the list's rows are reloaded, so only its search is kept.
    static func reduced(_ state: NavigationState) -> NavigationState {
        NavigationState(screens: state.screens.map { screen in
            guard case .list(let list) = screen else { return screen }
            var kept = UserListState()
            kept.search = list.search
            return .list(kept)
        })
    }

    // MARK: the writer (on `queue`)

    private func writeBatch() {
        let (states, detachments, clients) = pending.withLock { pending in
            defer { pending = Pending() }
            return (pending.states, pending.detachments, pending.clients)
        }
        guard !writer.finished, !abandoned.load(ordering: .sequentiallyConsistent) else { return }
        var lines: [UInt8] = []
        func append(_ line: Line) -> Int {
            let bytes = line.bytes()
            lines.append(contentsOf: bytes)
            return bytes.count
        }
        for (key, item) in states {
            let previous = writer.live[key]
            let detachedAt: Date? = detachments[key] ?? previous?.saved.detachedAt
            let saved = SavedSession(key: key, id: item.id, fullState: item.state, detachedAt: detachedAt,
                                     client: clients[key] ?? item.client)
            if let previous, previous.saved.id == saved.id, previous.saved.state == saved.state,
               previous.saved.detachedAt == detachedAt, previous.saved.listWindow == saved.listWindow,
               previous.saved.client == saved.client {
                continue
            }
            writer.live[key] = Entry(saved: saved, bytes: append(Line(session: saved)))
        }
        for key in Set(detachments.keys).union(clients.keys) where states[key] == nil {
            guard let previous = writer.live[key] else { continue }
            let detachedAt: Date? = detachments[key] ?? previous.saved.detachedAt
            let client = clients[key] ?? previous.saved.client
            guard previous.saved.detachedAt != detachedAt || previous.saved.client != client else { continue }
            let saved = SavedSession(key: key, id: previous.saved.id, state: previous.saved.state,
                                     detachedAt: detachedAt, listWindow: previous.saved.listWindow, client: client)
            writer.live[key] = Entry(saved: saved, bytes: append(Line(session: saved)))
        }
        reconcileEnded { _ = append($0) }
        guard !lines.isEmpty else { return }
        if writer.fd < 0 { compact() }
        guard writer.fd >= 0 else { return }
        if !Self.writeAll(writer.fd, lines) || fdatasync(writer.fd) != 0 {
            report("Could not write sessions to \(path): \(String(cString: strerror(errno)))")
            Glibc.close(writer.fd)
            writer.fd = -1  // the next batch starts a fresh file with every live session
            return
        }
        writer.fileBytes += lines.count
        let liveBytes = writer.live.values.reduce(0) { $0 + $1.bytes }
        if writer.fileBytes > max(1 << 20, 4 * liveBytes) { compact() }
        // After the batch is on disk: a test awaits this line rather than polling the file.
        logger.debug("Wrote \(lines.count) bytes of sessions to \(path)")
    }

    /// Every 2 s at most: a tombstone for each written session that has ended since. Not due
    /// yet: looks again when it is, so an ended session gets its tombstone even if nothing else
    /// changes meanwhile.
    private func reconcileEnded(_ append: (Line) -> Void) {
        let now = ContinuousClock.now
        if now - writer.lastReconcile >= .seconds(2), let keys = liveKeys.withLock({ $0 }) {
            writer.lastReconcile = now
            let alive = keys()
            for key in writer.live.keys where !alive.contains(key) {
                writer.live[key] = nil
                append(Line(ended: key))
            }
        } else if !writer.reconcileScheduled {
            writer.reconcileScheduled = true
            queue.async(after: .seconds(2)) { [self] in
                writer.reconcileScheduled = false
                writeBatch()
            }
        }
    }

    /// Writes every live session to a new file, syncs it, renames it over the journal, syncs
    /// the directory, and appends to it from then on.
    private func compact() {
        if writer.fd >= 0 { Glibc.close(writer.fd) }
        writer.fd = -1
        guard !abandoned.load(ordering: .sequentiallyConsistent) else { return }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            report("Cannot create the state directory \(directory): \(error)")
            return
        }
        var contents: [UInt8] = []
        for (key, entry) in writer.live {
            let bytes = Line(session: entry.saved).bytes()
            writer.live[key]?.bytes = bytes.count
            contents.append(contentsOf: bytes)
        }
        let aside = path + ".new"
        let fd = open(aside, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            report("Cannot write \(aside): \(String(cString: strerror(errno)))")
            return
        }
        guard Self.writeAll(fd, contents), fdatasync(fd) == 0, rename(aside, path) == 0 else {
            report("Cannot write \(path): \(String(cString: strerror(errno)))")
            Glibc.close(fd)
            unlink(aside)
            return
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)  // the rename itself survives a power loss
            Glibc.close(directoryFD)
        }
        _ = lseek(fd, 0, SEEK_END)
        writer.fd = fd
        writer.fileBytes = contents.count
        writer.failedBefore = false
    }

    /// Logged once per run of failures, not per batch.
    private func report(_ message: String) {
        guard !writer.failedBefore else { return }
        writer.failedBefore = true
        logger.error(message + "; sessions are still saved at a clean shutdown")
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }
}
