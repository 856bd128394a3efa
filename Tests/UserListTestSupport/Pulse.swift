import Dispatch
import ThreadLocks

/// An awaitable "something changed" signal for in-process tests: the code a test watches calls
/// `beat()` after each change (a recorded state, a held call, a delivered frame), and the test
/// awaits `until { condition }`, which re-checks the condition after each beat instead of polling
/// on a timer. A condition that never comes true fails after `generousDeadline` instead of hanging.
///
/// No beat is ever lost: `until` notes the beat count before checking, and a beat that lands
/// between the check and the suspension wakes it at once.
package final class Pulse: Sendable {
    private struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var beats = 0
        var nextID = 0
        var waiters: [Waiter] = []
        /// Threads blocked in `blockingUntil`.
        var sleepers: [DispatchSemaphore] = []
    }

    private let state = Lock(State())

    package init() {}

    /// Wakes every waiter to re-check its condition. Safe from any thread.
    package func beat() {
        let (woken, sleepers) = state.withLock { s in
            s.beats += 1
            defer { (s.waiters, s.sleepers) = ([], []) }
            return (s.waiters, s.sleepers)
        }
        for waiter in woken { waiter.continuation.resume() }
        for sleeper in sleepers { sleeper.signal() }
    }

    /// `until` for blocking code (a thread of its own, `offPool`): blocks the calling thread
    /// until `condition` holds, checking it now and after each beat; false past `timeout`.
    @available(*, noasync, message: "async code awaits until")
    package func blockingUntil(
        timeout: Duration = .seconds(generousDeadline), _ condition: () throws -> Bool
    ) rethrows -> Bool {
        let deadline = DispatchTime.now() + .nanoseconds(Int(timeout / .nanoseconds(1)))
        while true {
            let seen = state.withLock { $0.beats }
            if try condition() { return true }
            let sleeper = DispatchSemaphore(value: 0)
            let beatAlready = state.withLock { s -> Bool in
                if s.beats != seen { return true }
                s.sleepers.append(sleeper)
                return false
            }
            if !beatAlready, sleeper.wait(timeout: deadline) == .timedOut { return try condition() }
        }
    }

    /// Suspends until `condition` holds, checking it now and after each beat, on the caller's
    /// actor. Returns false if `timeout` passes first (the caller records the failure).
    @discardableResult
    package func until(
        timeout: Duration = .seconds(generousDeadline),
        isolation: isolated (any Actor)? = #isolation,
        _ condition: () throws -> Bool
    ) async rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            let seen = state.withLock { $0.beats }
            if try condition() { return true }
            if ContinuousClock.now >= deadline { return false }
            await nextBeat(after: seen, deadline: deadline)
        }
    }

    /// Returns after the first beat past `seen`, or at `deadline`.
    private func nextBeat(after seen: Int, deadline: ContinuousClock.Instant) async {
        let id = state.withLock { s in
            s.nextID += 1
            return s.nextID
        }
        var expiry: Task<Void, Never>?
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let beatAlready = state.withLock { s -> Bool in
                if s.beats != seen { return true }
                s.waiters.append(Waiter(id: id, continuation: continuation))
                return false
            }
            if beatAlready { return continuation.resume() }
            // The one timer, started once the waiter is in place: it only bounds a wait that a
            // bug would make endless.
            expiry = Task { [weak self] in
                try? await Task.sleep(until: deadline, clock: .continuous)
                self?.resume(id)
            }
        }
        expiry?.cancel()
    }

    private func resume(_ id: Int) {
        let waiter = state.withLock { s -> Waiter? in
            guard let index = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return s.waiters.remove(at: index)
        }
        waiter?.continuation.resume()
    }
}
