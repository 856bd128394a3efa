import Dispatch
import Foundation

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
