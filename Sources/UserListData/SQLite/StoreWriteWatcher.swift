import Foundation
import Glibc
import Synchronization

/// Tells the change feed when another connection may have committed to a SQLite file, without a
/// fixed poll: inotify reports each `write()` to the file or its WAL, and the feed then checks
/// `PRAGMA data_version`, which only a commit changes.
///
/// A writer's WAL frames reach the file (and inotify) a moment before its commit becomes visible
/// (after its fsync, when it updates the shared-memory index, which inotify does not see), and
/// one burst of writes may hold several commits. So after a write the check runs at once and
/// again at growing intervals (1, 2, 4 … 256 ms after), about ten cheap reads of
/// `data_version` per burst. A slow safety-net check (`safetyInterval`) covers what inotify
/// cannot see: a file on a network filesystem, or a queue overflow.
///
/// The store's own writes are not looked for: the feed hears those from the writer itself. While
/// an own write transaction holds the write lock (`ownWriteBegan()` … `ownWriteEnded()`, told
/// once the writer has handed its commit to the feed), every write to the file is its own, so
/// the watcher stops reading inotify until it ends. It used to
/// wake for each page the commit wrote (a dozen times per save, each time taking the CPU from
/// the writer) and then check ten times more. A writer that committed before the lock was taken
/// is seen by the own commit (its change-log row comes first, so the feed reads the log). One
/// that took the lock after the own commit and wrote before `ownWriteEnded()` (it would have to
/// begin, write and reach its commit in those microseconds) would have its writes taken for
/// the own ones: the next own commit or the safety-net check finds it. A check scheduled after
/// every own write to cover that instant cost each save a wake-up that landed on later intents.
final class StoreWriteWatcher: Sendable {
    /// The delays of the checks that follow a write, until one finds a commit.
    static let recheckMilliseconds: [Int32] = [1, 2, 4, 8, 16, 32, 64, 128, 256]

    private enum OwnWrite {
        static let none = 0
        static let holdingLock = 1
        /// Holding the lock, and the watcher waits on `resumeFD` for it to end.
        static let watcherAside = 2
    }

    /// Shared with the watcher thread (which must not hold `self`: `deinit` stops it).
    private final class OwnWriteState: Sendable {
        let value = Atomic<Int>(OwnWrite.none)
    }

    private let stopPipe: (read: Int32, write: Int32)
    /// Written once when an own write ends while the watcher stands aside.
    private let resumePipe: (read: Int32, write: Int32)
    private let stopped = Atomic<Bool>(false)
    private let ownWrite = OwnWriteState()
    /// Whether inotify watches the file (false: only the safety-net checks run).
    let isWatching: Bool

    /// Watches the directory of `path` for writes to `path` and `path-wal`, calling `check` on a
    /// thread of its own.
    init(path: String, safetyInterval: Duration, check: @escaping @Sendable () -> Void) {
        stopPipe = Self.makePipe()
        resumePipe = Self.makePipe()
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let names: Set<String> = [url.lastPathComponent, url.lastPathComponent + "-wal"]
        let inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        var watching = false
        if inotify >= 0 {
            watching = inotify_add_watch(inotify, directory, UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO)) >= 0
        }
        isWatching = watching
        let loop = Loop(inotify: watching ? inotify : -1, stopFD: stopPipe.read, resumeFD: resumePipe.read,
                        names: names,
                        safetyMilliseconds: Int64(max(1, safetyInterval.components.seconds * 1000
                                                      + safetyInterval.components.attoseconds / 1_000_000_000_000_000)),
                        check: check)
        let thread = Thread { [ownWrite] in
            loop.run(ownWrite: ownWrite.value)
            if inotify >= 0 { close(inotify) }
            close(loop.stopFD)
            close(loop.resumeFD)
        }
        thread.name = "userlistd.sqlite.watch"
        thread.start()
    }

    /// Ends the thread (it closes its descriptors on the way out).
    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
        close(stopPipe.write)
    }

    deinit {
        stop()
        close(resumePipe.write)
    }

    /// A pipe whose ends are closed on exec and never block (-1s if none could be made).
    private static func makePipe() -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return (-1, -1) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        return (fds[0], fds[1])
    }

    /// The store's own write transaction took the write lock (on the writer's thread).
    func ownWriteBegan() {
        ownWrite.value.store(OwnWrite.holdingLock, ordering: .sequentiallyConsistent)
    }

    /// It committed or rolled back: the watcher, if it stood aside, reads inotify again.
    func ownWriteEnded() {
        guard ownWrite.value.exchange(OwnWrite.none, ordering: .sequentiallyConsistent) == OwnWrite.watcherAside else {
            return
        }
        var byte: UInt8 = 1
        _ = write(resumePipe.write, &byte, 1)
    }

    /// The watcher thread's loop and its state.
    private struct Loop: Sendable {
        let inotify: Int32
        let stopFD: Int32
        let resumeFD: Int32
        let names: Set<String>
        let safetyMilliseconds: Int64
        let check: @Sendable () -> Void

        func run(ownWrite: borrowing Atomic<Int>) {
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            var rechecks: ArraySlice<Int32> = []
            var nextCheck: Int64? = nil
            var safetyCheck = Self.nowMilliseconds() + safetyMilliseconds
            var aside = false
            func checked(_ now: Int64) {
                check()
                safetyCheck = now + safetyMilliseconds
            }
            while true {
                let now = Self.nowMilliseconds()
                let due = min(nextCheck ?? safetyCheck, safetyCheck)
                var fds = [pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: resumeFD, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)]
                let ready = poll(&fds, aside || inotify < 0 ? 2 : 3, Int32(clamping: max(0, due - now)))
                if ready < 0 && errno != EINTR { return }
                if fds[0].revents != 0 { return }
                if fds[1].revents != 0 {
                    var bytes: (UInt64, UInt64) = (0, 0)
                    _ = read(resumeFD, &bytes, 16)
                    aside = false
                    _ = Self.drain(inotify, &buffer, names)  // the own write's pages
                    continue
                }
                // One read first: while the own write holds the lock its pages keep arriving, and
                // reading them one by one as they come would take a core from the writer.
                if !aside && inotify >= 0 && fds[2].revents != 0
                    && Self.drain(inotify, &buffer, names, until: {
                        ownWrite.load(ordering: .sequentiallyConsistent) == OwnWrite.holdingLock
                    }) {
                    // (Without a resume pipe it could not be told when to come back: it stays.)
                    if resumeFD >= 0,
                       ownWrite.compareExchange(expected: OwnWrite.holdingLock, desired: OwnWrite.watcherAside,
                                                ordering: .sequentiallyConsistent).exchanged {
                        aside = true
                        continue
                    }
                    // Checked now and then on the schedule even when this check finds a commit:
                    // the writes seen may hold a further commit that is not visible yet.
                    let now = Self.nowMilliseconds()
                    checked(now)
                    rechecks = StoreWriteWatcher.recheckMilliseconds[...]
                    nextCheck = now + Int64(rechecks.removeFirst())
                    continue
                }
                let after = Self.nowMilliseconds()
                if let next = nextCheck, after >= next {
                    checked(after)
                    nextCheck = rechecks.popFirst().map { after + Int64($0) }
                } else if after >= safetyCheck {
                    checked(after)
                }
            }
        }

        private static func nowMilliseconds() -> Int64 {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
        }

        /// Reads every queued event, or stops after a read once `until` holds; true when one was
        /// about the store's files (or events were lost).
        static func drain(_ fd: Int32, _ buffer: inout [UInt8], _ names: Set<String>,
                          until stop: () -> Bool = { false }) -> Bool {
            guard fd >= 0 else { return false }
            var relevant = false
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard count > 0 else { return relevant }
                var offset = 0
                buffer.withUnsafeBytes { bytes in
                    while offset + MemoryLayout<inotify_event>.size <= count {
                        let base = bytes.baseAddress! + offset
                        let mask = base.loadUnaligned(fromByteOffset: 4, as: UInt32.self)
                        let length = Int(base.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
                        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                            relevant = true
                        } else if length > 0 {
                            let nameBytes = UnsafeRawBufferPointer(start: base + MemoryLayout<inotify_event>.size,
                                                                   count: length)
                            let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                            if names.contains(name) { relevant = true }
                        }
                        offset += MemoryLayout<inotify_event>.size + length
                    }
                }
                if stop() { return relevant }
            }
        }
    }
}
