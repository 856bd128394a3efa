import Foundation

/// A child process's output (stdout or stderr), read as it arrives through a pipe: a test awaits
/// the line it expects (`sees`, or `waitFor` in blocking code) instead of re-reading a file on a
/// timer. Each read wakes the waiters; so does the end of the output (the child exited).
package final class CapturedOutput: @unchecked Sendable {
    // Invariant: `bytes` and `ended` are touched only while `condition` is locked.
    private let pipe = Pipe()
    private let condition = NSCondition()
    private var bytes = Data()
    private var ended = false
    private let arrived = Pulse()

    package init() {
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            // End of file: every writer closed it (the child exited); nothing more will come.
            if data.isEmpty { handle.readabilityHandler = nil }
            self?.received(data)
        }
    }

    private func received(_ data: Data) {
        condition.lock()
        bytes.append(data)
        if data.isEmpty { ended = true }
        condition.broadcast()
        condition.unlock()
        arrived.beat()
    }

    /// What to hand the child as its `standardOutput` or `standardError`; close this copy once
    /// the child runs, so that the end of its output is seen when it exits.
    package var writingEnd: FileHandle { pipe.fileHandleForWriting }

    /// Everything read so far.
    package var text: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether the output has ended (every writer closed it: the child exited).
    package var hasEnded: Bool {
        condition.lock()
        defer { condition.unlock() }
        return ended
    }

    /// Waits until `condition` (usually on `text`) holds, re-checked after each read; false only
    /// past the generous deadline.
    package func sees(isolation: isolated (any Actor)? = #isolation, _ condition: () -> Bool) async -> Bool {
        await arrived.until(isolation: isolation, condition)
    }

    /// `sees` for blocking code: blocks this thread until `holds(text, hasEnded)` or `timeout`
    /// seconds pass; returns whether it held.
    package func waitFor(timeout: Double, _ holds: (_ text: String, _ hasEnded: Bool) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !holds(String(decoding: bytes, as: UTF8.self), ended) {
            if !condition.wait(until: deadline) { return holds(String(decoding: bytes, as: UTF8.self), ended) }
        }
        return true
    }
}
