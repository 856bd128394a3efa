import Dispatch
import Foundation
import Glibc
import Testing
import ThreadLocks
import UserListTestSupport

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
        // The kernel's list of threads: only polled.
        #expect(await eventually(timeout: .seconds(30), every: .milliseconds(5)) { !Self.threadNames().contains(name) },
                "the thread is still there")
    }

    /// Delayed jobs run on the thread in the order they come due, after the jobs queued without
    /// a delay, and never before their delay has passed (a lower bound, which no slow machine
    /// can break).
    @Test func delayedJobsRunInDueOrderAfterTheImmediateOnes() {
        let thread = JobThread(name: "jobs-delayed")
        defer { thread.finish() }
        let seen = Lock<[String]>([])
        let elsewhere = Lock(0)
        let done = DispatchSemaphore(value: 0)
        let queued = ContinuousClock.now
        let ranAfter = Lock<Duration?>(nil)
        thread.async(after: .milliseconds(60)) {
            if !thread.isCurrent { elsewhere.withLock { $0 += 1 } }
            ranAfter.withLock { $0 = ContinuousClock.now - queued }
            seen.withLock { $0.append("later") }
            done.signal()
        }
        thread.async(after: .milliseconds(30)) { seen.withLock { $0.append("sooner") } }
        thread.async(after: .milliseconds(30)) { seen.withLock { $0.append("sooner, queued second") } }
        thread.async { seen.withLock { $0.append("now") } }
        done.wait()
        #expect(seen.withLock { $0 } == ["now", "sooner", "sooner, queued second", "later"])
        #expect(elsewhere.withLock { $0 } == 0, "a delayed job ran off the thread")
        #expect(ranAfter.withLock { $0 }.map { $0 >= .milliseconds(60) } == true, "ran before its delay")
    }

    /// `finish` lets the thread end only after the delayed jobs queued before it have run.
    @Test func finishingWaitsForDelayedJobs() {
        let thread = JobThread(name: "jobs-finish")
        let done = DispatchSemaphore(value: 0)
        thread.async(after: .milliseconds(20)) { done.signal() }
        thread.finish()
        #expect(done.wait(timeout: .now() + 60) == .success, "the delayed job was dropped")
    }

    /// `.idle` runs the jobs under SCHED_IDLE at nice +10 (or more); the default changes nothing.
    @Test func anIdleThreadRunsItsJobsUnderSchedIdle() {
        let idle = JobThread(name: "jobs-idle", priority: .idle)
        let normal = JobThread(name: "jobs-normal")
        defer {
            idle.finish()
            normal.finish()
        }
        #expect(idle.sync { sched_getscheduler(0) } == 5)  // SCHED_IDLE
        #expect(idle.sync { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) } >= 10)
        #expect(normal.sync { sched_getscheduler(0) } == sched_getscheduler(0), "as the thread that started it")
    }

    /// The names of this process's threads, as the kernel has them.
    static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .newlines) }
    }
}
