import Testing
import UserListTestSupport

/// Records every state a ViewModel publishes through `onStateChange`, so a test can assert each
/// change an intent causes, in order (the Composable Architecture's `TestStore` habit).
///
/// `expect { $0.field = value }` takes the next recorded state and compares it with the last
/// asserted state changed by the closure; anything else that changed fails the test.
final class StateRecorder<State: Equatable> {
    private(set) var recorded: [State] = []
    private var asserted: State
    private var cursor = 0

    /// Beats after every recorded state: `until` re-checks a condition on the model then.
    let changes = Pulse()

    init(_ initial: State) { asserted = initial }

    func record(_ state: State) {
        recorded.append(state)
        changes.beat()
    }

    /// Waits until `condition` (usually on the recorded model itself) holds after some change.
    func until(
        isolation: isolated (any Actor) = #isolation,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: () -> Bool
    ) async {
        await changes.expect(isolation: isolation, sourceLocation: sourceLocation, condition)
    }

    /// States recorded but not asserted yet.
    var unasserted: Int { recorded.count - cursor }

    /// The most recently asserted state.
    var current: State { asserted }

    func expect(
        _ change: (inout State) -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard cursor < recorded.count else {
            Issue.record("expected a state change, none was recorded", sourceLocation: sourceLocation)
            return
        }
        let actual = recorded[cursor]
        cursor += 1
        var expected = asserted
        change(&expected)
        #expect(actual == expected, sourceLocation: sourceLocation)
        asserted = actual
    }

    /// Waits for the next change to be recorded, then asserts it like `expect(_:)`.
    func receive(
        _ change: (inout State) -> Void,
        isolation: isolated (any Actor) = #isolation,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        await changes.expect(isolation: isolation, sourceLocation: sourceLocation) { self.unasserted > 0 }
        expect(change, sourceLocation: sourceLocation)
    }

    func expectNoMoreChanges(sourceLocation: SourceLocation = #_sourceLocation) {
        if cursor < recorded.count {
            Issue.record(
                "\(recorded.count - cursor) unexpected state change(s): \(recorded[cursor...])",
                sourceLocation: sourceLocation)
        }
    }
}
