/// Computing the JSON Patch from one state to the next: what the server sends after every change.
///
/// The patch must be small, because it is what crosses the socket on every keystroke and every
/// page load, and cheap, because it runs on every state change of every session:
///
/// - Objects are compared key by key; scalars that differ become one `replace`.
/// - Arrays first drop their common prefix and suffix, so an appended page costs only the adds
///   and a change in one row costs only that row.
/// - Arrays whose elements are all objects with a unique string or integer `"id"` (rows, screens)
///   are matched by id: a changed field of a row is one `replace` at that field, a removed row one
///   `remove`, a row that moved after a re-sort one `move`. Rows that keep their relative order
///   are the longest increasing subsequence of old positions, found in O(n log n), so the number
///   of moves is the minimum. Past `maximumMoves` the reordering is sent as one `replace` of the
///   array, which is smaller than hundreds of moves and keeps the cost linear.
/// - Other arrays change element by element over the middle, then add or remove the rest.
///
/// Operations are applied in order, so every index emitted accounts for the operations before it.
extension JSONPatch {
    /// More moves than this in one keyed array and the array is replaced whole.
    public static let maximumMoves = 64

    /// The operations turning `old` into `new`: `apply(diff(from: a, to: b), to: a) == b`.
    public static func diff(from old: JSONValue, to new: JSONValue) -> [PatchOperation] {
        var differ = Differ()
        differ.diff(old, new)
        return differ.operations
    }
}

private enum RowKey: Hashable {
    case string(String)
    case int(Int64)

    init?(_ value: JSONValue) {
        guard case .object(let object) = value, let id = object["id"] else { return nil }
        switch id {
        case .string(let s): self = .string(s)
        case .int(let i): self = .int(i)
        default: return nil
        }
    }
}

private struct Differ {
    var operations: [PatchOperation] = []
    var path: [String] = []

    var pointer: JSONPointer { JSONPointer(tokens: path) }
    func pointer(index: Int) -> JSONPointer { JSONPointer(tokens: path + [String(index)]) }

    mutating func diff(_ old: JSONValue, _ new: JSONValue) {
        switch (old, new) {
        case let (.object(a), .object(b)):
            diffObjects(a, b)
        case let (.array(a), .array(b)):
            diffArrays(a, b)
        default:
            if old != new { operations.append(.replace(path: pointer, value: new)) }
        }
    }

    mutating func diff(_ old: JSONValue, _ new: JSONValue, at token: String) {
        path.append(token)
        diff(old, new)
        path.removeLast()
    }

    mutating func diffObjects(_ old: [String: JSONValue], _ new: [String: JSONValue]) {
        for key in old.keys.sorted() where new[key] == nil {
            operations.append(.remove(path: pointer.appending(key)))
        }
        for (key, value) in new.sorted(by: { $0.key < $1.key }) {
            if let previous = old[key] {
                diff(previous, value, at: key)
            } else {
                operations.append(.add(path: pointer.appending(key), value: value))
            }
        }
    }

    mutating func diffArrays(_ old: [JSONValue], _ new: [JSONValue]) {
        var prefix = 0
        let shorter = min(old.count, new.count)
        while prefix < shorter && old[prefix] == new[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < shorter - prefix && old[old.count - 1 - suffix] == new[new.count - 1 - suffix] { suffix += 1 }
        let oldMiddle = old[prefix..<(old.count - suffix)]
        let newMiddle = new[prefix..<(new.count - suffix)]
        if oldMiddle.isEmpty && newMiddle.isEmpty { return }
        if let oldKeys = Differ.keys(oldMiddle), let newKeys = Differ.keys(newMiddle) {
            diffKeyed(oldMiddle, oldKeys, newMiddle, newKeys, offset: prefix, whole: new)
        } else {
            diffPositional(oldMiddle, newMiddle, offset: prefix)
        }
    }

    /// Row keys of every element, or `nil` unless all are objects with a unique id.
    static func keys(_ elements: ArraySlice<JSONValue>) -> [RowKey]? {
        var keys: [RowKey] = []
        keys.reserveCapacity(elements.count)
        var seen = Set<RowKey>(minimumCapacity: elements.count)
        for element in elements {
            guard let key = RowKey(element), seen.insert(key).inserted else { return nil }
            keys.append(key)
        }
        return keys
    }

    mutating func diffPositional(_ old: ArraySlice<JSONValue>, _ new: ArraySlice<JSONValue>, offset: Int) {
        let common = min(old.count, new.count)
        for i in 0..<common {
            diff(old[old.startIndex + i], new[new.startIndex + i], at: String(offset + i))
        }
        if old.count > common {
            for i in stride(from: offset + old.count - 1, through: offset + common, by: -1) {
                operations.append(.remove(path: pointer(index: i)))
            }
        }
        for i in common..<new.count {
            operations.append(.add(path: pointer(index: offset + i), value: new[new.startIndex + i]))
        }
    }

    mutating func diffKeyed(
        _ old: ArraySlice<JSONValue>, _ oldKeys: [RowKey], _ new: ArraySlice<JSONValue>, _ newKeys: [RowKey],
        offset: Int, whole: [JSONValue]
    ) {
        let newPosition = Differ.positions(newKeys)
        let oldPosition = Differ.positions(oldKeys)

        // The rows that survive, in their old order, and which of them keep their relative order.
        var working = oldKeys.filter { newPosition[$0] != nil }
        var workingIndex: [RowKey: Int] = [:]
        for (i, key) in working.enumerated() { workingIndex[key] = i }
        let survivorsInNewOrder = newKeys.filter { workingIndex[$0] != nil }
        let stable = Differ.longestIncreasingRun(survivorsInNewOrder.map { workingIndex[$0]! })
            .reduce(into: Set<RowKey>()) { $0.insert(survivorsInNewOrder[$1]) }
        if survivorsInNewOrder.count - stable.count > JSONPatch.maximumMoves {
            operations.append(.replace(path: pointer, value: .array(whole)))
            return
        }

        // 1. Removals, from the back so earlier indices stay valid.
        for i in oldKeys.indices.reversed() where newPosition[oldKeys[i]] == nil {
            operations.append(.remove(path: pointer(index: offset + i)))
        }

        // 2. Walk the new order. Invariant: working[0..<i] == newKeys[0..<i].
        var settled = stable
        for i in newKeys.indices {
            let key = newKeys[i]
            let newValue = new[new.startIndex + i]
            guard let oldIndex = oldPosition[key] else {
                working.insert(key, at: i)
                settled.insert(key)
                operations.append(.add(path: pointer(index: offset + i), value: newValue))
                continue
            }
            if stable.contains(key) {
                moveBlockers(before: key, at: i, &working, &settled, newPosition: newPosition, offset: offset)
            }
            if working[i] != key {
                let j = working[(i + 1)...].firstIndex(of: key)!
                working.remove(at: j)
                working.insert(key, at: i)
                operations.append(.move(from: pointer(index: offset + j), path: pointer(index: offset + i)))
            }
            settled.insert(key)
            diff(old[old.startIndex + oldIndex], newValue, at: String(offset + i))
        }
    }

    /// Each key's index in `keys`.
    static func positions(_ keys: [RowKey]) -> [RowKey: Int] {
        var position: [RowKey: Int] = [:]
        position.reserveCapacity(keys.count)
        for (i, key) in keys.enumerated() { position[key] = i }
        return position
    }

    /// Rows waiting to move may sit in front of a stable row (`key`, due at `i`): sends each
    /// straight to its place among the settled rows, so it moves once.
    mutating func moveBlockers(before key: RowKey, at i: Int, _ working: inout [RowKey], _ settled: inout Set<RowKey>,
                               newPosition: [RowKey: Int], offset: Int) {
        while working[i] != key && !settled.contains(working[i]) {
            let blocker = working[i]
            let target = newPosition[blocker]!
            var j = i + 1
            while j < working.count && !(settled.contains(working[j]) && newPosition[working[j]]! > target) {
                j += 1
            }
            working.remove(at: i)
            working.insert(blocker, at: j - 1)
            settled.insert(blocker)
            operations.append(.move(from: pointer(index: offset + i), path: pointer(index: offset + j - 1)))
        }
    }

    /// Indices (into `sequence`) of one longest strictly increasing subsequence, O(n log n).
    static func longestIncreasingRun(_ sequence: [Int]) -> [Int] {
        var tails: [Int] = []  // index into sequence of the smallest tail of each length
        var previous = [Int](repeating: -1, count: sequence.count)
        for (i, value) in sequence.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let mid = (low + high) / 2
                if sequence[tails[mid]] < value { low = mid + 1 } else { high = mid }
            }
            if low > 0 { previous[i] = tails[low - 1] }
            if low == tails.count { tails.append(i) } else { tails[low] = i }
        }
        var result: [Int] = []
        var current = tails.last ?? -1
        while current >= 0 {
            result.append(current)
            current = previous[current]
        }
        return result.reversed()
    }
}
