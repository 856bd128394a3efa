import UserListPresentation
import UserListWire

/// The serialized patch operations one change produced for sessions that show nothing but the
/// list, kept while the change is being applied, so sessions whose list went from the very same
/// state to the very same state (see `ListSteps`) serialize it once.
///
/// The operations of a list-only session depend on its states alone (the list is always screen
/// 0), so equal before and after states mean equal bytes; each client still gets its own
/// envelope (epoch, sequence number).
package final class SharedPatches {
    private struct Entry {
        let before: UserListState
        let after: UserListState
        let serializedOperations: [UInt8]
    }

    static let capacity = 8
    private var entries: [Entry] = []

    /// The bytes recorded for a list-only session going from `before` to `after`.
    func operations(from before: NavigationState, to after: NavigationState) -> [UInt8]? {
        guard let (a, b) = Self.listOnly(before, after) else { return nil }
        return recorded(a, b)
    }

    func record(from before: NavigationState, to after: NavigationState, _ serializedOperations: [UInt8]) {
        guard let (a, b) = Self.listOnly(before, after) else { return }
        record(a, b, serializedOperations)
    }

    /// The operations taking a list-only session from `before` to `after`, serialized here if
    /// no session recorded them yet (empty when nothing changed).
    func operations(fromList before: UserListState, toList after: UserListState) -> [UInt8] {
        if let bytes = recorded(before, after) { return bytes }
        let serialized = StateDiff.serializedOps(from: NavigationState(screens: [.list(before)]),
                                                 to: NavigationState(screens: [.list(after)]))
        record(before, after, serialized)
        return serialized
    }

    private func recorded(_ before: UserListState, _ after: UserListState) -> [UInt8]? {
        entries.first {
            $0.before.isIdentical(to: before) && $0.after.isIdentical(to: after)
        }?.serializedOperations
    }

    private func record(_ before: UserListState, _ after: UserListState, _ serializedOperations: [UInt8]) {
        guard entries.count < Self.capacity else { return }
        entries.append(Entry(before: before, after: after, serializedOperations: serializedOperations))
    }

    private static func listOnly(_ before: NavigationState, _ after: NavigationState) -> (UserListState,
        UserListState)? {
        guard before.screens.count == 1, after.screens.count == 1,
              case .list(let a) = before.screens[0], case .list(let b) = after.screens[0] else { return nil }
        return (a, b)
    }
}
