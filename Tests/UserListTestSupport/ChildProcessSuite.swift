import Testing
import ThreadLocks

/// Suites that start child processes (daemons, PostgreSQL, tmux, python fixtures) take turns:
/// one such suite runs at a time, whatever runs the tests. `make test` runs them in their own
/// serialized invocation; this trait is what makes a plain `swift test` (every suite at once,
/// in parallel) pass too, where two of them starting daemons and servers beside each other on a
/// two-core machine ran past their deadlines.
///
/// Applied once around the whole suite (not around each test), so the time a suite waits for
/// its turn never counts against its tests' time limits. Pair it with `.serialized`.
package struct ChildProcessSuite: SuiteTrait, TestScoping {
    package var isRecursive: Bool { false }

    package func provideScope(for test: Test, testCase: Test.Case?,
                              performing function: @Sendable () async throws -> Void) async throws {
        await ChildProcessTurns.shared.enter()
        do {
            try await function()
        } catch {
            await ChildProcessTurns.shared.leave()
            throw error
        }
        await ChildProcessTurns.shared.leave()
    }
}

extension Trait where Self == ChildProcessSuite {
    /// One suite that starts child processes at a time (see `ChildProcessSuite`).
    package static var childProcesses: Self { ChildProcessSuite() }
}

/// First come, first served turns for `ChildProcessSuite`.
private enum ChildProcessTurns {
    static let shared = AsyncTurns()
}
