import Foundation
import Glibc

/// How long a test waits for something that must happen: long enough that only a hang misses it,
/// even on a loaded two-core machine running other suites beside this one. A test that waits this
/// long has found a bug, never a slow machine.
package let generousDeadline: Double = 60

/// Polls `condition` (every `poll` seconds, on the calling thread) until it holds or `timeout`
/// seconds pass; returns whether it held. For blocking test code (threads, `offPool`): the
/// outcome is decided by the condition, never by how long a fixed sleep happened to be.
@discardableResult
package func waitUntil(timeout: Double = generousDeadline, poll: Double = 0.05,
                       _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return true }
        if Date() >= deadline { return false }
        usleep(useconds_t(poll * 1_000_000))
    }
}

/// Runs blocking test code (a child's `waitUntilExit`, a blocking socket read, `waitUntil`) on a
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
