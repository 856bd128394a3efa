import Dispatch
import Foundation
import Glibc
import ThreadLocks

extension Process {
    /// Blocks until the child exits or `timeout` seconds pass; returns whether it exited. Woken by
    /// the child's termination (Foundation reaps it and calls `terminationHandler`, which this
    /// sets), never a poll: a child that exits at once returns at once.
    package func waitForExit(timeout: Double) -> Bool {
        let exited = DispatchSemaphore(value: 0)
        terminationHandler = { _ in exited.signal() }
        // Exited before the handler was in place: it will not be called.
        if !isRunning { return true }
        return exited.wait(timeout: .now() + timeout) == .success
    }
}

/// Blocks until child `pid` (ours, not yet reaped) exits, then reaps it; returns its wait status
/// decoded (exit code, or 128 + signal) and whether the deadline had to kill it. Woken by the exit
/// itself (`waitid`), never a poll. At `timeout` the child gets SIGKILL: a test waiting that long
/// has found a hang, and the kill only ever reaches our own unreaped child.
package func reapChild(_ pid: pid_t, timeout: Double) -> (code: Int32, killedAtDeadline: Bool) {
    let state = Lock<(exited: Bool, killed: Bool)>((false, false))
    let deadline = DispatchWorkItem {
        state.withLock { state in
            // Until the reap below the pid stays ours (a zombie at worst), so this kill is safe.
            guard !state.exited else { return }
            state.killed = true
            kill(pid, SIGKILL)
        }
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: deadline)
    var info = siginfo_t()
    while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0, errno == EINTR {}
    state.withLock { $0.exited = true }
    deadline.cancel()
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1, errno == EINTR {}
    let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    return (code, state.withLock { $0.killed })
}
