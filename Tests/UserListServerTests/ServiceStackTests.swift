import Testing
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
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(60)) }
            events.withLock { $0.append("sweeps ended") }
        }
        services.allStarted()
        #expect(services.state == .running)
        await services.stopAll()
        #expect(services.state == .stopped)
        #expect(events.withLock { $0 } == ["sweeps ended", "loops stopped", "store stopped"])
    }
}
