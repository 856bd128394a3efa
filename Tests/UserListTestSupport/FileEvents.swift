import Glibc

/// Waits for what another process (or another thread's I/O) writes to files: blocks until
/// `condition` holds, re-checking it after each change the kernel reports on `paths` (inotify:
/// a write, a file created or moved in), never on a timer. Only writes wake it, so a condition
/// that reads the watched files (a query of the database) does not wake itself. For a child
/// daemon's log line, a WAL growing under a merge, a checkpoint writing the database file. The
/// watches are armed before the first check, so a change that lands between the two wakes it.
/// False past `timeout` seconds, or if a path cannot be watched (it must exist: watch a directory
/// for a file still to come).
///
/// A change the kernel does not report as a file event (a commit that becomes visible through
/// SQLite's shared memory only) must be followed by a write to be seen: pick paths accordingly.
@available(*, noasync, message: "blocking: call it from a thread of its own (offPool)")
package func whenFilesChange(
    _ paths: [String], timeout: Double = generousDeadline,
    until condition: () throws -> Bool
) rethrows -> Bool {
    let events = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
    guard events >= 0 else { return try condition() }
    defer { close(events) }
    let mask = UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO)
    for path in paths where inotify_add_watch(events, path, mask) < 0 {
        return try condition()
    }
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    return try whenReadable(events, timeout: timeout, until: condition) {
        // What changed does not matter, only that something did: empty the queue.
        while buffer.withUnsafeMutableBytes({ read(events, $0.baseAddress, $0.count) }) > 0 {}
    }
}

/// Blocks until `condition` holds, checking it now and each time `fd` becomes readable (after
/// `drain` has read what woke it), never on a timer; false past `timeout` seconds. For a
/// descriptor another process writes to: an inotify queue, a datagram socket.
@available(*, noasync, message: "blocking: call it from a thread of its own (offPool)")
package func whenReadable(
    _ fd: Int32, timeout: Double, until condition: () throws -> Bool, drain: () -> Void
) rethrows -> Bool {
    let deadline = ContinuousClock.now + .seconds(timeout)
    while true {
        if try condition() { return true }
        let left = deadline - ContinuousClock.now
        guard left > .zero else { return false }
        var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: left.components.seconds * 1000 + 1)
        guard poll(&ready, 1, milliseconds) >= 0 || errno == EINTR else { return try condition() }
        drain()
    }
}
