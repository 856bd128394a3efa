import Testing
import UserListServer

/// The loop as the serial executor of the actors that name it (as a session does): their jobs
/// run on the loop thread, and come back there after an await elsewhere; what they await
/// outside themselves (a store read) runs off the loop; a plain loop job may enter them in place.
@Suite struct EventLoopExecutorTests {
    actor OnLoop {
        let loop: EventLoop
        var value = 0
        nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

        init(_ loop: EventLoop) { self.loop = loop }

        func bump() -> Bool {
            value += 1
            return loop.isLoopThread
        }

        /// Where it runs: before, during a nonisolated await, and after.
        func awayAndBack() async -> [Bool] {
            let before = loop.isLoopThread
            let away = await Self.whereAmI(loop)
            return [before, away, loop.isLoopThread]
        }

        nonisolated static func whereAmI(_ loop: EventLoop) async -> Bool { loop.isLoopThread }
    }

    /// A started loop and an actor of it, for `body`; the loop stops after it.
    static func withActorOnALoop(_ body: (EventLoop, OnLoop) async throws -> Void) async throws {
        let loop = try EventLoop()
        loop.start(name: "test-executor-loop")
        defer { loop.stop() }
        try await body(loop, OnLoop(loop))
    }

    @Test(.timeLimit(.minutes(2)))
    func anActorOfTheLoopRunsOnItsThreadAndWhatItAwaitsElsewhereRunsOff() async throws {
        try await Self.withActorOnALoop { loop, actor in
            #expect(!loop.isLoopThread, "the test itself runs off the loop")
            #expect(await actor.bump())
            #expect(await actor.awayAndBack() == [true, false, true])
            for _ in 0..<100 { #expect(await actor.bump()) }
            #expect(await actor.value == 101)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aLoopJobEntersTheActorInPlace() async throws {
        try await Self.withActorOnALoop { loop, actor in
            let value = await withCheckedContinuation { (done: CheckedContinuation<Int, Never>) in
                loop.execute {
                    let value = actor.assumeIsolated { actor in
                        _ = actor.bump()
                        return actor.value
                    }
                    done.resume(returning: value)
                }
            }
            #expect(value == 1)
        }
    }
}
