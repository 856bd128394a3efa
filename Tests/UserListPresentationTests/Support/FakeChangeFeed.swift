import UserListDomain
import ThreadLocks

/// A change feed the test drives: every observer is given what the test sends, in order, on the
/// test's thread, each change with the next position (as a store's writer does).
final class FakeChangeFeed: UserChangeFeed {
    private struct State {
        var observers: [Int: @Sendable (CommittedChange) -> Void] = [:]
        var nextID = 0
        var seq = 0
    }

    private let state = Lock(State())

    func observe(_ handler: @escaping @Sendable (CommittedChange) -> Void) -> ChangeObservation {
        let id = state.withLock { state in
            state.nextID += 1
            state.observers[state.nextID] = handler
            return state.nextID
        }
        return ChangeObservation { [weak self] in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
    }

    var subscriberCount: Int { state.withLock { $0.observers.count } }

    func send(_ change: UserChange) {
        let (observers, seq) = state.withLock { state in
            state.seq += 1
            return (Array(state.observers.values), state.seq)
        }
        for observer in observers { observer(CommittedChange(change, seq: seq)) }
    }
}
