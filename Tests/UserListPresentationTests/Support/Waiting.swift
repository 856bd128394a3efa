import Testing

/// Polls `condition` on the caller's actor, letting other work on it run between checks, and
/// records an issue if it still fails after `timeout`. Never a fixed sleep: a test waits exactly
/// as long as the code under test needs.
func waitUntil(
    timeout: Duration = .seconds(60),
    _ condition: () -> Bool,
    isolation: isolated (any Actor) = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation
) async {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    var spins = 0
    while !condition() {
        if clock.now >= deadline {
            Issue.record("condition not met within \(timeout)", sourceLocation: sourceLocation)
            return
        }
        spins += 1
        if spins % 50 == 0 {
            try? await Task.sleep(for: .milliseconds(1))
        } else {
            await Task.yield()
        }
    }
}

/// Lets pending work on the caller's actor run, for tests asserting that something does *not*
/// happen (no extra call, no state change). Deterministic for work already enqueued.
func settle(isolation: isolated (any Actor) = #isolation) async {
    for _ in 0..<200 { await Task.yield() }
}
