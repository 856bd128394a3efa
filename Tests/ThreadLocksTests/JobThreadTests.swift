import Foundation
import Testing
import ThreadLocks

/// The store's writer thread: jobs in order on one thread, `sync` after what was queued before
/// it, and a named thread that ends once it is let go.
@Suite struct JobThreadTests {
    @Test func jobsRunInTheOrderQueuedAllOnTheThread() {
        let thread = JobThread(name: "jobs-in-order")
        defer { thread.finish() }
        let seen = Lock<[Int]>([])
        let elsewhere = Lock(0)
        for index in 0..<1_000 {
            thread.async {
                if !thread.isCurrent { elsewhere.withLock { $0 += 1 } }
                seen.withLock { $0.append(index) }
            }
        }
        // `sync` runs after every job queued before it.
        #expect(thread.sync { seen.withLock { $0 } } == Array(0..<1_000))
        #expect(elsewhere.withLock { $0 } == 0, "a job ran off the thread")
        #expect(!thread.isCurrent)
    }

    @Test func syncHandsBackWhatTheBodyReturns() {
        let thread = JobThread(name: "jobs-sync")
        defer { thread.finish() }
        var local = [1, 2, 3]  // a non-escaping body may use the caller's state: the caller waits
        #expect(thread.sync { local.append(4); return local.count } == 4)
        #expect(local == [1, 2, 3, 4])
        #expect(thread.sync { Optional<Int>.none } == nil)
    }

    @Test func theThreadIsNamedAndEndsOnceFinished() async {
        let name = "jobs-\(getpid() % 10_000)-end"
        let thread = JobThread(name: name)
        #expect(thread.sync { Self.threadNames().contains(name) })
        thread.finish()
        #expect(await Self.eventually { !Self.threadNames().contains(name) }, "the thread is still there")
    }

    /// The names of this process's threads, as the kernel has them.
    static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .newlines) }
    }

    static func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }
}
