import Dispatch
import Synchronization

/// One reader thread of `FanOutReaders`: runs the jobs posted to it on the connections it owns
/// and times its own sessions' patches.
///
/// Invariant (why `@unchecked Sendable`): from `init` until `join` returns true, only the thread
/// touches `set`; the owner takes the connections back only after that. Jobs and results pass
/// through mutexes, one job at a time: the owner posts the next only after `result()`.
final class FanOutReader: @unchecked Sendable {
    enum Job: Sendable {
        case drain
        case await(needle: [UInt8], what: String)
        case stop
    }

    typealias Outcome = Result<(last: UInt64, frameBytes: Int), BenchError>

    let set: ConnectionSet
    private let name: String
    private let job = Mutex<Job>(.drain)
    private let outcome = Mutex<Outcome>(.success((0, 0)))
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private var thread: BenchThread?

    init(_ set: ConnectionSet, name: String) {
        self.set = set
        self.name = name
        thread = BenchThread(name: name) { [self] in serve() }
    }

    func post(_ next: Job) {
        job.withLock { $0 = next }
        wake.signal()
    }

    /// Waits for the job posted last: when its last patch was read and a patch frame's size.
    func result() throws(BenchError) -> (last: UInt64, frameBytes: Int) {
        guard done.wait(timeout: .now() + 15) == .success else { throw BenchError("\(name): no answer within 15 s") }
        return try outcome.withLock { $0 }.get()
    }

    /// Stops the thread once its current job is over; true if it ended within 15 s.
    func join() -> Bool {
        post(.stop)
        return thread?.join(timeout: 15) ?? true
    }

    private func serve() {
        while true {
            wake.wait()
            let current = job.withLock { $0 }
            let result: Outcome
            switch current {
            case .stop:
                return
            case .drain:
                while set.pump(timeoutMillis: 0, { _, _, _ in }) > 0 {}
                result = .success((0, 0))
            case .await(let needle, let what):
                do throws(BenchError) {
                    result = .success(try FanOutBench.awaitPatches(set, containing: needle, receivers: set.count,
                                                                   what: what))
                } catch {
                    result = .failure(error)
                }
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
    }
}
