import Testing
import UserListPresentation
import UserListTestSupport

extension Pulse {
    /// Awaits `condition`, re-checked after each beat on the caller's actor (the models here call
    /// back on it), and records an issue if it still fails after the generous deadline. Never a
    /// fixed sleep or a poll: a test waits exactly for the change it names.
    func expect(
        isolation: isolated (any Actor)? = #isolation,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: () -> Bool
    ) async {
        if await !until(isolation: isolation, condition) {
            Issue.record("condition not met within \(generousDeadline)s", sourceLocation: sourceLocation)
        }
    }
}

/// The models' one state callback, so a test can chain a pulse onto it.
protocol PublishesStateChanges: AnyObject {
    var onStateChange: (() -> Void)? { get set }
}

extension Navigator: PublishesStateChanges {}
extension UserListViewModel: PublishesStateChanges {}
extension UserDetailViewModel: PublishesStateChanges {}

/// A pulse that beats after every state `model` publishes: for a model no `StateRecorder` watches.
/// Chained after any callback already set, which keeps working.
@discardableResult
func stateChanges(of model: some PublishesStateChanges) -> Pulse {
    let changes = Pulse()
    let earlier = model.onStateChange
    model.onStateChange = { earlier?(); changes.beat() }
    return changes
}

/// Lets pending work on the caller's actor run, for tests asserting that something does *not*
/// happen (no extra call, no state change). Deterministic for work already enqueued.
func settle(isolation: isolated (any Actor) = #isolation) async {
    for _ in 0..<200 { await Task.yield() }
}
