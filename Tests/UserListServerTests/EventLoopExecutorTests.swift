import Testing
import UserListServer

/// The loop as a task executor: a task that prefers it runs on the loop thread, and so does a
/// free default actor it enters (what keeps an intent's round trip on one thread); work that
/// leaves for elsewhere comes back to the loop.
@Suite struct EventLoopExecutorTests {
    actor Counter {
        var value = 0
        func bump(_ loop: EventLoop) -> Bool {
            value += 1
            return loop.isLoopThread
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aTaskPreferringTheLoopAndTheActorsItEntersRunOnTheLoopThread() async throws {
        let loop = try EventLoop()
        loop.start(name: "test-executor-loop")
        defer { loop.stop() }
        let counter = Counter()
        let observed = await Task(executorPreference: loop) { () -> [Bool] in
            var seen = [loop.isLoopThread]
            seen.append(await counter.bump(loop))
            // Away to the global pool and back.
            await Task.detached { _ = 0 }.value
            seen.append(loop.isLoopThread)
            for _ in 0..<100 { _ = await counter.bump(loop) }
            seen.append(await counter.bump(loop))
            return seen
        }.value
        #expect(observed == [true, true, true, true])
        #expect(await counter.value == 102)
    }
}
