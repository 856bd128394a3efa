import Dispatch
import Foundation

/// A plain thread for blocking socket work (echo servers, epoll readers, the rename writer),
/// kept off Swift's cooperative pool. `join` waits with a timeout so the bench never hangs.
final class BenchThread: Sendable {
    private let done = DispatchSemaphore(value: 0)

    init(name: String, _ body: @escaping @Sendable () -> Void) {
        let done = self.done
        let thread = Thread {
            body()
            done.signal()
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// True if the thread finished within `seconds`.
    @discardableResult
    func join(timeout seconds: Double) -> Bool {
        done.wait(timeout: .now() + seconds) == .success
    }
}
