import Foundation
import UserListDomain
import UserListPresentation
import UserListWire

/// What a session shows of the other sessions, here and on daemons sharing the store
/// (PROTOCOL.md §5.1): server-side state, not a ViewModel's, added to the state document next
/// to the screens' own fields.
///
/// The list's markers change one user at a time (`markers`), so a session's patch for them
/// costs what changed, not the size of the set: with a thousand sessions each holding a user,
/// comparing whole sets in every session at every change would be O(sessions²).
struct SessionPresence: Equatable {
    /// One other person who has the detail screen's user open.
    struct Person: Equatable {
        let user: String
        var editing: Bool
    }

    /// The others who have the detail screen's user open, by name (sessions of one person count
    /// once, editing if any of them is), sorted. Empty with no detail screen.
    var present: [Person] = []
    /// The users some other session has open (the list's `open_elsewhere`).
    private(set) var openElsewhere: Set<UUID> = []
    /// Markers changed since the last patch, with what each was then.
    private(set) var markersChanged: [UUID: Bool] = [:]
    /// How many markers the clients have.
    private(set) var markersSent = 0

    init() {}

    /// The people in `holders`, as `present` lists them.
    static func people(_ holders: some Collection<PresenceBoard.Holder>) -> [Person] {
        var byName: [String: Bool] = [:]
        for holder in holders {
            byName[holder.name, default: false] = byName[holder.name, default: false] || holder.editing
        }
        return byName.map { Person(user: $0.key, editing: $0.value) }.sorted { $0.user < $1.user }
    }

    mutating func setMarker(_ user: UUID, _ marked: Bool) {
        guard openElsewhere.contains(user) != marked else { return }
        if markersChanged[user] == nil { markersChanged[user] = !marked }
        if marked { openElsewhere.insert(user) } else { openElsewhere.remove(user) }
    }

    /// Every marker at once (a session starting).
    mutating func setMarkers(_ users: Set<UUID>) {
        for user in openElsewhere where !users.contains(user) { setMarker(user, false) }
        for user in users { setMarker(user, true) }
    }

    // MARK: the document

    /// `document`'s screens with this presence's fields added (a snapshot).
    func adding(to document: JSONValue) -> JSONValue {
        guard case .object(var root) = document, case .array(var screens)? = root["screens"] else { return document }
        for index in screens.indices {
            guard case .object(var screen) = screens[index], case .object(var state)? = screen["state"] else {
                continue
            }
            switch screen["kind"] {
            case .string("list") where !openElsewhere.isEmpty:
                state["open_elsewhere"] = markersValue
            case .string("detail") where !present.isEmpty:
                state["present"] = presentValue
            default:
                continue
            }
            screen["state"] = .object(state)
            screens[index] = .object(screen)
        }
        root["screens"] = .array(screens)
        return .object(root)
    }

    private var markersValue: JSONValue {
        .object(Dictionary(uniqueKeysWithValues: openElsewhere.map { (UUIDText.lowercase($0), JSONValue.bool(true)) }))
    }

    private var presentValue: JSONValue {
        .array(present.map { .object(["user": .string($0.user), "editing": .bool($0.editing)]) })
    }

    /// Whether `patch` would add nothing, told without building its pointers: no marker changed
    /// since the last patch and nobody is present, now or as last sent. The common case (no one
    /// else has these users open), checked at every flush.
    func patchIsEmpty(fromPresent sentPresent: [Person]) -> Bool {
        markersChanged.isEmpty && markersSent == openElsewhere.count && present.isEmpty && sentPresent.isEmpty
    }

    /// The operations that bring a client from `sentPresent` and the markers it was sent (shown
    /// with `old`'s screens) to this presence (with `new`'s), after the screens' own patch;
    /// resets the changed markers. A detail screen the screens' patch added or replaced has no
    /// `present` yet.
    mutating func patch(fromPresent sentPresent: [Person], screens old: NavigationState, _ new: NavigationState,
                        into ops: inout PatchOperationsWriter) {
        let list = JSONPointer(tokens: ["screens", "0", "state", "open_elsewhere"])
        if markersSent == 0 && !openElsewhere.isEmpty {
            ops.append(.add(path: list, value: markersValue))
        } else if markersSent > 0 && openElsewhere.isEmpty {
            ops.append(.remove(path: list))
        } else {
            for (user, was) in markersChanged where openElsewhere.contains(user) != was {
                let path = list.appending(UUIDText.lowercase(user))
                ops.append(was ? .remove(path: path) : .add(path: path, value: .bool(true)))
            }
        }
        markersChanged.removeAll()
        markersSent = openElsewhere.count
        guard let index = new.screens.lastIndex(where: { if case .detail = $0 { true } else { false } }) else { return }
        let patchedInPlace = if index < old.screens.count, case .detail = old.screens[index] { true } else { false }
        let before = patchedInPlace ? sentPresent : []
        guard before != present else { return }
        let path = JSONPointer(tokens: ["screens", String(index), "state", "present"])
        ops.append(present.isEmpty ? .remove(path: path) : .add(path: path, value: presentValue))
    }
}
