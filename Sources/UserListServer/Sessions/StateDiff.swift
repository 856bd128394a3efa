import Foundation
import UserListDomain
import UserListPresentation
import UserListWire

/// The patch between two session states, computed from the typed states rather than by
/// building and diffing two JSON documents.
///
/// After every intent and completion each session compares what it last sent with what it has
/// now. Building the JSON of a 1,000-row list and diffing it costs milliseconds; comparing the
/// `User` values costs microseconds, and rows whose storage is shared compare at once. Only a
/// change in the middle of a list that is not a plain edit, append or removal (a renamed row
/// that moves) falls back to the generic JSON differ, and then only over the rows between the
/// unchanged prefix and suffix.
package enum StateDiff {
    package static func ops(from old: NavigationState, to new: NavigationState) -> [PatchOperation] {
        var ops: [PatchOperation] = []
        diff(old, new, into: &ops)
        return ops
    }

    /// The same operations as `ops(from:to:)`, serialized (`FrameEncoder.serializedOperations`'s
    /// bytes), or empty when nothing changed. Rows are written straight from the `User` values,
    /// not built as `JSONValue`s first: a page's fifty rows were a third of the daemon's time
    /// serving it.
    package static func serializedOps(from old: NavigationState, to new: NavigationState) -> [UInt8] {
        var writer = PatchOperationsWriter()
        diff(old, new, into: &writer)
        return writer.isEmpty ? [] : writer.finished()
    }

    private static func diff(_ old: NavigationState, _ new: NavigationState, into ops: inout some PatchSink) {
        let screens = JSONPointer(tokens: ["screens"])
        let common = min(old.screens.count, new.screens.count)
        for index in 0..<common {
            let path = screens.appending(index: index)
            switch (old.screens[index], new.screens[index]) {
            case (.list(let a), .list(let b)):
                list(a, b, at: path.appending("state"), into: &ops)
            case (.detail(let a), .detail(let b)):
                detail(a, b, at: path.appending("state"), into: &ops)
            case (.history(let a), .history(let b)):
                history(a, b, at: path.appending("state"), into: &ops)
            default:
                ops.append(.replace(path: path, value: StateDocument.screen(new.screens[index])))
            }
        }
        for index in stride(from: old.screens.count - 1, through: common, by: -1) {
            ops.append(.remove(path: screens.appending(index: index)))
        }
        for index in common..<new.screens.count {
            ops.append(.add(path: screens.appending(index: index), value: StateDocument.screen(new.screens[index])))
        }
    }

    // MARK: screens

    private static func list(_ a: UserListState, _ b: UserListState, at path: JSONPointer,
                             into ops: inout some PatchSink) {
        field(a.loading, b.loading, "loading", path, &ops) { .string($0.rawValue) }
        field(a.errorMessage, b.errorMessage, "error_message", path, &ops, optionalString)
        field(a.hasMore, b.hasMore, "has_more", path, &ops) { .bool($0) }
        field(a.hasPrevious, b.hasPrevious, "has_previous", path, &ops) { .bool($0) }
        field(a.totalCount, b.totalCount, "total_count", path, &ops) { $0.map { .int(Int64($0)) } ?? .null }
        field(a.search, b.search, "search", path, &ops, optionalString)
        field(a.isStale, b.isStale, "is_stale", path, &ops) { .bool($0) }
        rows(a.users, b.users, at: path.appending("users"), into: &ops)
    }

    private static func detail(_ a: UserDetailState, _ b: UserDetailState, at path: JSONPointer,
                               into ops: inout some PatchSink) {
        field(a.userID, b.userID, "user_id", path, &ops) { .string(UUIDText.lowercase($0)) }
        if a.user != b.user {
            if let old = a.user, let new = b.user, old.id == new.id {
                row(old, new, at: path.appending("user"), into: &ops)
            } else {
                ops.append(.replace(path: path.appending("user"), value: b.user.map(StateDocument.user) ?? .null))
            }
        }
        field(a.draftName, b.draftName, "draft_name", path, &ops) { .string($0) }
        field(a.draftEmail, b.draftEmail, "draft_email", path, &ops) { .string($0) }
        field(a.draftAvatarURL, b.draftAvatarURL, "draft_avatar_url", path, &ops) { .string($0) }
        field(a.dirtyFields, b.dirtyFields, "dirty_fields", path, &ops, StateDocument.fields)
        field(a.fieldErrors, b.fieldErrors, "field_errors", path, &ops, StateDocument.fieldErrors)
        field(a.isDirty, b.isDirty, "is_dirty", path, &ops) { .bool($0) }
        field(a.canSave, b.canSave, "can_save", path, &ops) { .bool($0) }
        field(a.isSaving, b.isSaving, "is_saving", path, &ops) { .bool($0) }
        field(a.isNew, b.isNew, "is_new", path, &ops) { .bool($0) }
        field(a.isReadOnly, b.isReadOnly, "read_only", path, &ops) { .bool($0) }
        field(a.errorMessage, b.errorMessage, "error_message", path, &ops, optionalString)
        field(a.conflicts, b.conflicts, "conflicts", path, &ops, StateDocument.conflicts)
        field(a.followed, b.followed, "followed", path, &ops, StateDocument.followed)
        field(a.removal, b.removal, "removal", path, &ops) { $0.map(StateDocument.removal) ?? .null }
    }

    /// New entries at the top are adds at the front, a page read is adds at the end; anything
    /// else replaces the entries.
    private static func history(_ a: UserHistoryState, _ b: UserHistoryState, at path: JSONPointer,
                                into ops: inout some PatchSink) {
        field(a.userID, b.userID, "user_id", path, &ops) { .string(UUIDText.lowercase($0)) }
        if a.entries != b.entries {
            let entries = path.appending("entries")
            let newOnTop = b.entries.count - a.entries.count
            if newOnTop > 0 && b.entries.suffix(a.entries.count) == a.entries[...] {
                for index in (0..<newOnTop).reversed() {
                    ops.append(.add(path: entries.appending(index: 0), value: StateDocument.entry(b.entries[index])))
                }
            } else if newOnTop > 0 && b.entries.prefix(a.entries.count) == a.entries[...] {
                for index in a.entries.count..<b.entries.count {
                    ops.append(.add(path: entries.appending(index: index),
                                    value: StateDocument.entry(b.entries[index])))
                }
            } else {
                ops.append(.replace(path: entries, value: .array(b.entries.map(StateDocument.entry))))
            }
        }
        field(a.loading, b.loading, "loading", path, &ops) { .string($0.wireName) }
        field(a.hasMore, b.hasMore, "has_more", path, &ops) { .bool($0) }
        field(a.errorMessage, b.errorMessage, "error_message", path, &ops, optionalString)
        field(a.reverting, b.reverting, "reverting", path, &ops) { $0.map { .int($0) } ?? .null }
    }

    // MARK: rows

    /// Rows matched by id: edits in place are field replaces, appends are adds, a removal is a
    /// remove; anything else between the common prefix and suffix goes to the generic differ.
    static func rows(_ old: [User], _ new: [User], at path: JSONPointer, into ops: inout some PatchSink) {
        // Borrowed through buffer pointers: comparing rows must not copy (and retain) them.
        let (prefix, suffix) = old.withUnsafeBufferPointer { a in
            new.withUnsafeBufferPointer { b -> (Int, Int) in
                if a.baseAddress == b.baseAddress && a.count == b.count { return (a.count, 0) }
                let limit = min(a.count, b.count)
                var prefix = 0
                while prefix < limit, a[prefix].id == b[prefix].id { prefix += 1 }
                var suffix = 0
                while suffix < limit - prefix, a[a.count - 1 - suffix].id == b[b.count - 1 - suffix].id { suffix += 1 }
                for index in 0..<prefix where !sameBytes(a, index, b, index) && a[index] != b[index] {
                    row(a[index], b[index], at: path.appending(index: index), into: &ops)
                }
                return (prefix, suffix)
            }
        }
        if prefix == old.count && prefix == new.count { return }
        let oldMiddle = old[prefix..<(old.count - suffix)]
        let newMiddle = new[prefix..<(new.count - suffix)]
        if oldMiddle.isEmpty {
            ops.addRows(newMiddle, startingAt: prefix, of: path)
        } else if newMiddle.isEmpty {
            for _ in oldMiddle {
                ops.append(.remove(path: path.appending(index: prefix)))
            }
        } else {
            let generic = JSONPatch.diff(
                from: .array(oldMiddle.map(StateDocument.user)), to: .array(newMiddle.map(StateDocument.user)))
            // Ops on the whole middle (a replace of it) or on its end ("-") cannot be moved into
            // the full list: spell those out as removes and adds instead.
            let shiftable = generic.allSatisfy { op in
                guard let first = op.path.tokens.first else { return false }
                if case .move(let from, _) = op, from.tokens.first == "-" { return false }
                return first != "-"
            }
            if shiftable {
                for op in generic { ops.append(rebase(op, onto: path, offset: prefix)) }
            } else {
                for _ in oldMiddle { ops.append(.remove(path: path.appending(index: prefix))) }
                ops.addRows(newMiddle, startingAt: prefix, of: path)
            }
        }
        // The suffix now starts at the same index in both lists.
        let suffixStart = new.count - suffix
        old.withUnsafeBufferPointer { a in
            new.withUnsafeBufferPointer { b in
                for offset in 0..<suffix where !sameBytes(a, a.count - suffix + offset, b, suffixStart + offset)
                    && a[a.count - suffix + offset] != b[suffixStart + offset] {
                    row(a[a.count - suffix + offset], b[suffixStart + offset],
                        at: path.appending(index: suffixStart + offset), into: &ops)
                }
            }
        }
    }

    /// Whether two rows are the same bytes: the same id and version and the very same strings,
    /// so equal. After a save, a list's copy holds its old rows bit for bit; settling those with
    /// `==` copied (retained and released) each of them, a 1,000-row list's worth per change.
    /// Rows that differ in their bytes may still be equal, and are then compared with `==`.
    private static func sameBytes(_ a: UnsafeBufferPointer<User>, _ i: Int, _ b: UnsafeBufferPointer<User>,
                                  _ j: Int) -> Bool {
        memcmp(a.baseAddress! + i, b.baseAddress! + j, MemoryLayout<User>.size) == 0
    }

    private static func row(_ a: User, _ b: User, at path: JSONPointer, into ops: inout some PatchSink) {
        field(a.name, b.name, "name", path, &ops) { .string($0) }
        field(a.email, b.email, "email", path, &ops) { .string($0) }
        field(a.avatarURL, b.avatarURL, "avatar_url", path, &ops, optionalString)
        field(a.version, b.version, "version", path, &ops) { .int(Int64($0)) }
    }

    // MARK: helpers

    private static func field<T: Equatable>(_ a: T, _ b: T, _ key: String, _ path: JSONPointer,
                                            _ ops: inout some PatchSink, _ json: (T) -> JSONValue) {
        if a != b { ops.append(.replace(path: path.appending(key), value: json(b))) }
    }

    private static func optionalString(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }

    /// Moves an op made against a sub-array (indices from 0) to `path`, with its first index shifted.
    private static func rebase(_ op: PatchOperation, onto path: JSONPointer, offset: Int) -> PatchOperation {
        func shifted(_ pointer: JSONPointer) -> JSONPointer {
            var tokens = pointer.tokens
            if let first = tokens.first, let index = Int(first) { tokens[0] = String(index + offset) }
            return JSONPointer(tokens: path.tokens + tokens)
        }
        switch op {
        case .add(let p, let value): return .add(path: shifted(p), value: value)
        case .remove(let p): return .remove(path: shifted(p))
        case .replace(let p, let value): return .replace(path: shifted(p), value: value)
        case .move(let from, let p): return .move(from: shifted(from), path: shifted(p))
        case .copy(let from, let p): return .copy(from: shifted(from), path: shifted(p))
        case .test(let p, let value): return .test(path: shifted(p), value: value)
        }
    }
}

/// Where `StateDiff` puts what it finds: a list of operations (`ops(from:to:)`), or their bytes
/// written at once (`serializedOps(from:to:)`, every patch a session sends).
protocol PatchSink {
    mutating func append(_ operation: PatchOperation)
    /// Adds `users` as the elements `index`, `index + 1`… of the array at `rows`.
    mutating func addRows(_ users: ArraySlice<User>, startingAt index: Int, of rows: JSONPointer)
}

extension Array: PatchSink where Element == PatchOperation {
    mutating func addRows(_ users: ArraySlice<User>, startingAt index: Int, of rows: JSONPointer) {
        for (offset, user) in users.enumerated() {
            append(.add(path: rows.appending(index: index + offset), value: StateDocument.user(user)))
        }
    }
}

extension PatchOperationsWriter: PatchSink {
    mutating func addRows(_ users: ArraySlice<User>, startingAt index: Int, of rows: JSONPointer) {
        for (offset, user) in users.enumerated() {
            appendAdd(at: rows, index: index + offset) { StateDocument.write(user, into: &$0) }
        }
    }
}
