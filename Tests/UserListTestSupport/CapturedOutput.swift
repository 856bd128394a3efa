import Foundation
import ThreadLocks

/// A child process's output (stdout or stderr), read as it arrives through a pipe, with a pulse
/// that beats after each read: a test awaits the line it expects instead of re-reading a file on
/// a timer.
package final class CapturedOutput: Sendable {
    private let pipe = Pipe()
    private let bytes = Lock(Data())
    private let arrived = Pulse()

    package init() {
        let (bytes, arrived) = (bytes, arrived)
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            // End of file: the child closed it (exited); nothing more will come.
            if data.isEmpty { handle.readabilityHandler = nil }
            bytes.withLock { $0.append(data) }
            arrived.beat()
        }
    }

    /// What to hand the child as its `standardOutput` or `standardError`.
    package var writingEnd: FileHandle { pipe.fileHandleForWriting }

    /// Everything read so far.
    package var text: String { String(decoding: bytes.withLock { $0 }, as: UTF8.self) }

    /// Waits until `condition` (usually on `text`) holds, re-checked after each read; false only
    /// past the generous deadline.
    package func sees(isolation: isolated (any Actor)? = #isolation, _ condition: () -> Bool) async -> Bool {
        await arrived.until(isolation: isolation, condition)
    }
}
