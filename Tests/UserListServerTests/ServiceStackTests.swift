import Testing
import UserListTestSupport
import ThreadLocks
@testable import UserListServer

/// The daemon's parts stop in reverse order of their start, and a background task is over
/// (not merely told to stop) by the time the stop returns.
@Suite struct ServiceStackTests {
    @Test func partsStopLastStartedFirstAndTasksAreAwaited() async {
        let events = Lock<[String]>([])
        let services = ServiceStack(logger: Logger(sink: .memory, level: .error))
        services.started("store") { events.withLock { $0.append("store stopped") } }
        services.started("loops") { events.withLock { $0.append("loops stopped") } }
        services.task("sweeps") {
            // Runs until cancelled: a stream nobody finishes ends only when its task is cancelled.
            let (never, keptOpen) = AsyncStream<Never>.makeStream()
            for await _ in never {}
            keptOpen.finish()
            events.withLock { $0.append("sweeps ended") }
        }
        services.allStarted()
        #expect(services.state == .running)
        await services.stopAll()
        #expect(services.state == .stopped)
        #expect(events.withLock { $0 } == ["sweeps ended", "loops stopped", "store stopped"])
    }
}
