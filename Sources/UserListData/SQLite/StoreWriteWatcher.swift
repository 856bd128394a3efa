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
final class StoreWriteWatcher: Sendable {
    /// The delays of the checks that follow a write, until one finds a commit.
    static let recheckMilliseconds: [Int32] = [1, 2, 4, 8, 16, 32, 64, 128, 256]

    private let stopPipe: (read: Int32, write: Int32)
    private let stopped = Atomic<Bool>(false)
    /// Whether inotify watches the file (false: only the safety-net checks run).
    let isWatching: Bool

    /// Watches the directory of `path` for writes to `path` and `path-wal`, calling `check` on a
    /// thread of its own.
    init(path: String, safetyInterval: Duration, check: @escaping @Sendable () -> Void) {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        } else {
            fds = [-1, -1]
        }
        stopPipe = (fds[0], fds[1])
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let names: Set<String> = [url.lastPathComponent, url.lastPathComponent + "-wal"]
        let inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        var watching = false
        if inotify >= 0 {
            watching = inotify_add_watch(inotify, directory, UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO)) >= 0
        }
        isWatching = watching
        let watchFD = watching ? inotify : -1
        let safetyMilliseconds = Int32(clamping: safetyInterval.components.seconds * 1000
                                       + safetyInterval.components.attoseconds / 1_000_000_000_000_000)
        let stopFD = stopPipe.read
        let thread = Thread {
            Self.run(inotify: watchFD, stopFD: stopFD, names: names,
                     safetyMilliseconds: max(1, safetyMilliseconds), check: check)
            if inotify >= 0 { close(inotify) }
            close(stopFD)
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

    deinit { stop() }

    private static func run(inotify: Int32, stopFD: Int32, names: Set<String>, safetyMilliseconds: Int32,
                            check: @Sendable () -> Void) {
        var rechecks: ArraySlice<Int32> = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            var fds = [pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)]
            let timeout = rechecks.first ?? safetyMilliseconds
            let ready = poll(&fds, inotify >= 0 ? 2 : 1, timeout)
            if ready < 0 && errno != EINTR { return }
            if fds[0].revents != 0 { return }
            if inotify >= 0 && fds[1].revents != 0 && Self.drain(inotify, &buffer, names) {
                // Checked now and then on the schedule even when this check finds a commit:
                // the writes seen may hold a further commit that is not visible yet.
                check()
                rechecks = recheckMilliseconds[...]
            } else if ready == 0 {
                if !rechecks.isEmpty { rechecks.removeFirst() }
                check()
            }
        }
    }

    /// Reads every queued event; true when one was about the store's files (or events were lost).
    private static func drain(_ fd: Int32, _ buffer: inout [UInt8], _ names: Set<String>) -> Bool {
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
                        let nameBytes = UnsafeRawBufferPointer(start: base + MemoryLayout<inotify_event>.size, count: length)
                        let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                        if names.contains(name) { relevant = true }
                    }
                    offset += MemoryLayout<inotify_event>.size + length
                }
            }
        }
    }
}
