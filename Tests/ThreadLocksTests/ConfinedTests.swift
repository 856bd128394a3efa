import Dispatch
import Testing
import ThreadLocks

/// State that one thread or serial queue owns: its owner uses it, anyone else is stopped (in
/// every build).
@Suite struct ConfinedTests {
    @Test func theOwningThreadUsesItsState() {
        let thread = JobThread(name: "confined-thread")
        defer { thread.finish() }
        let counter = Confined(0, to: .thread(thread))
        for _ in 0..<100 { thread.async { counter.withValue { $0 += 1 } } }
        #expect(thread.sync { counter.withValue { $0 } } == 100)
    }

    /// The session journal's form: an `.idle` thread's delayed jobs use its state too.
    @Test func theOwningThreadsDelayedJobsUseItsState() {
        let thread = JobThread(name: "confined-idle", priority: .idle)
        defer { thread.finish() }
        let counter = Confined(0, to: .thread(thread))
        let done = DispatchSemaphore(value: 0)
        thread.async(after: .milliseconds(10)) {
            counter.withValue { $0 += 1 }
            done.signal()
        }
        done.wait()
        #expect(thread.sync { counter.withValue { $0 } } == 1)
    }

    @Test func theOwningQueueUsesItsState() {
        let queue = DispatchQueue(label: "confined-queue")
        let names = Confined([String](), to: .queue(queue))
        for index in 0..<10 { queue.async { names.withValue { $0.append("job \(index)") } } }
        #expect(queue.sync { names.withValue { $0.count } } == 10)
    }

    @Test func anotherThreadIsStopped() async {
        await #expect(processExitsWith: .failure) {
            let thread = JobThread(name: "confined-owner")
            let counter = Confined(0, to: .thread(thread))
            counter.withValue { $0 += 1 }  // not on `thread`
        }
    }

    @Test func anotherQueueIsStopped() async {
        await #expect(processExitsWith: .failure) {
            let owner = DispatchQueue(label: "confined-owner")
            let other = DispatchQueue(label: "confined-other")
            let names = Confined([String](), to: .queue(owner))
            other.sync { names.withValue { $0.append("from the wrong queue") } }
        }
    }

    @Test func theFirstUserKeepsItsState() {
        let counter = Confined(0, to: .firstUser)
        let thread = JobThread(name: "confined-first")
        defer { thread.finish() }
        for _ in 0..<10 { thread.async { counter.withValue { $0 += 1 } } }
        #expect(thread.sync { counter.withValue { $0 } } == 10)
    }

    @Test func aThreadAfterTheFirstUserIsStopped() async {
        await #expect(processExitsWith: .failure) {
            let counter = Confined(0, to: .firstUser)
            let thread = JobThread(name: "confined-first")
            thread.sync { counter.withValue { $0 += 1 } }
            counter.withValue { $0 += 1 }  // the test's thread, not the first user
        }
    }
}
