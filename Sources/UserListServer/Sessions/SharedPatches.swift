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
    /// What a list-only session sends for a step, and whether its journal records it.
    struct Outcome {
        let serializedOperations: [UInt8]
        /// Whether the step moves what a restart restores (`SessionJournal.restoreChanged`).
        let restoreChanged: Bool
    }

    private struct Entry {
        let before: UserListState
        let after: UserListState
        let outcome: Outcome
    }

    static let capacity = 8
    private var entries: [Entry] = []

    /// What was recorded for a list-only session going from `before` to `after`.
    func outcome(from before: NavigationState, to after: NavigationState) -> Outcome? {
        guard let (a, b) = Self.listOnly(before, after), let index = recordedIndex(a, b) else { return nil }
        return entries[index].outcome
    }

    func record(from before: NavigationState, to after: NavigationState, _ outcome: Outcome) {
        guard let (a, b) = Self.listOnly(before, after) else { return }
        record(a, b, outcome)
    }

    /// The operations taking a list-only session from `before` to `after`, serialized here if
    /// no session recorded them yet (empty when nothing changed).
    func operations(fromList before: UserListState, toList after: UserListState) -> [UInt8] {
        if let index = recordedIndex(before, after) { return entries[index].outcome.serializedOperations }
        let serialized = StateDiff.serializedOps(from: NavigationState(screens: [.list(before)]),
                                                 to: NavigationState(screens: [.list(after)]))
        record(before, after, Outcome(serializedOperations: serialized,
                                      restoreChanged: SessionJournal.restoreChanged(fromList: before, toList: after)))
        return serialized
    }

    /// By index: copying an entry out to compare it would retain all it holds, per session.
    private func recordedIndex(_ before: UserListState, _ after: UserListState) -> Int? {
        entries.indices.first { entries[$0].before.isIdentical(to: before) && entries[$0].after.isIdentical(to: after) }
    }

    private func record(_ before: UserListState, _ after: UserListState, _ outcome: Outcome) {
        guard entries.count < Self.capacity else { return }
        entries.append(Entry(before: before, after: after, outcome: outcome))
    }

    private static func listOnly(_ before: NavigationState, _ after: NavigationState) -> (UserListState,
        UserListState)? {
        guard before.screens.count == 1, after.screens.count == 1,
              case .list(let a) = before.screens[0], case .list(let b) = after.screens[0] else { return nil }
        return (a, b)
    }
}
