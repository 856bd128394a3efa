import Foundation
import Testing
import ThreadLocks

@Suite struct LockTests {
    /// Many threads adding under the lock lose no update.
    @Test func incrementsFromManyThreadsAreAllKept() {
        let counter = Lock(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<10_000 { counter.withLock { $0 += 1 } }
        }
        #expect(counter.withLock { $0 } == 80_000)
    }

    /// A value that cannot be copied is kept in place and changed there.
    @Test func holdsANoncopyableValue() {
        struct Token: ~Copyable { var uses = 0 }
        let token = Lock(Token())
        token.withLock { $0.uses += 2 }
        #expect(token.withLock { $0.uses } == 2)
    }

    /// What `body` throws reaches the caller, and the lock is free again afterwards.
    @Test func anErrorLeavesTheLockFree() {
        struct Refused: Error {}
        let value = Lock("a")
        #expect(throws: Refused.self) { try value.withLock { _ throws(Refused) in throw Refused() } }
        #expect(value.withLock { $0 } == "a")
    }
}

/// `make tsan` runs this with `USERLISTD_TSAN_CANARY=1` and expects ThreadSanitizer to report
/// it: proof that the sanitizer is live in that build, so the suites' zero reports mean something.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["USERLISTD_TSAN_CANARY"] == "1"))
struct ThreadSanitizerCanary {
    final class Unguarded: @unchecked Sendable {
        // Deliberately unsynchronized (the race is the point of this test).
        var count = 0
    }

    /// Two threads of their own, both started before either is waited for: nothing orders one's
    /// writes before the other's, so the race is reported however the machine schedules them
    /// (`concurrentPerform` could run both halves on one thread on a busy machine: no race then).
    @Test func anUnguardedCounterIsARace() {
        let shared = Unguarded()
        let finished = DispatchSemaphore(value: 0)
        let threads = (0..<2).map { _ in
            Thread {
                for _ in 0..<1_000 { shared.count += 1 }
                finished.signal()
            }
        }
        for thread in threads { thread.start() }
        finished.wait()
        finished.wait()
        #expect(shared.count > 0)
    }
}

@Suite struct AsyncTurnsTests {
    /// Tasks take their turns one at a time: no two are ever inside at once.
    @Test func noTwoTasksHoldTheTurnAtOnce() async {
        let turns = AsyncTurns()
        let inside = Lock((now: 0, most: 0))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    await turns.enter()
                    inside.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                    await Task.yield()
                    inside.withLock { $0.now -= 1 }
                    await turns.leave()
                }
            }
        }
        #expect(inside.withLock { $0.most } == 1)
    }
}
