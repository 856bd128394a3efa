import Foundation
import Glibc

/// How long a test waits for something that must happen: long enough that only a hang misses it,
/// even on a loaded two-core machine running other suites beside this one. A test that waits this
/// long has found a bug, never a slow machine.
package let generousDeadline: Double = 60

/// The one poll left in the tests, for what only another process or the kernel holds (a child
/// daemon's journal file, a thread leaving /proc, a registry counting sockets the kernel closes):
/// checks `condition` every `interval` until it holds or `timeout` passes; returns whether it
/// held. In-process code has something to await instead (`Pulse`, a recorder, a client's frames):
/// use that; so does a file another process writes (`whenFilesChange`). The outcome is decided
/// by the condition, never by how long a sleep happened to be.
package func eventually(
    timeout: Duration = .seconds(generousDeadline), every interval: Duration = .milliseconds(20),
    _ condition: () throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        // Cancelled (a time limit), the sleep returns at once: stop rather than spin.
        do { try await Task.sleep(for: interval) } catch { break }
    }
    return try condition()
}

/// `eventually` for blocking test code (a thread of its own, `offPool`): the same poll, sleeping
/// the calling thread between checks. Never from async code: it would hold a pool thread.
@available(*, noasync, message: "async code awaits the async form")
@discardableResult
package func eventually(
    timeout: Duration = .seconds(generousDeadline), every interval: Duration = .milliseconds(50),
    _ condition: () throws -> Bool
) rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        let (seconds, attoseconds) = interval.components
        usleep(useconds_t(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
    }
}

/// Runs blocking test code (a child's `waitUntilExit`, a blocking socket read, a blocking `eventually`) on a
/// thread of its own and hands back its result. Waiting on a Swift-concurrency thread would hold
/// one of the two an in-process daemon (`DaemonHarness`) needs on this machine, and a dedicated
/// thread depends on no pool's limits.
package func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 4 << 20
        thread.start()
    }
}

/// Calls `connect` until it succeeds (something listens), `givesUp()` says to stop (the daemon
/// exited) or `timeout` seconds pass; returns what it connected, or nil. For daemons that say
/// nothing when they listen (`--log-level warning`, no `NOTIFY_SOCKET`): a socket's listening is
/// seen only by trying it, so this polls, through the shared `eventually`. Blocking.
@available(*, noasync, message: "blocking: call it from a thread of its own (offPool)")
package func firstConnection<Connection>(
    timeout: Double, every interval: Duration = .milliseconds(10), givesUp: () -> Bool = { false },
    _ connect: () throws -> Connection
) -> Connection? {
    var connected: Connection?
    eventually(timeout: .seconds(timeout), every: interval) {
        connected = try? connect()
        return connected != nil || givesUp()
    }
    return connected
}
