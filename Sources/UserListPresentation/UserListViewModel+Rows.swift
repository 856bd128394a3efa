import Foundation
import UserListDomain

/// The one rule for how a change moves the list's rows, and the order they are kept in.
extension UserListViewModel {
    /// A change applied to the rows, before any trim.
    ///
    /// `replaying`: applied again to a page read while the change may or may not have committed
    /// yet. A save carries its version, so applying it twice is harmless; an addition or a
    /// removal of a user outside the loaded rows cannot tell whether the page's total already
    /// counts it, so the total is left as the page says.
    static func apply(_ change: UserChange, to updated: inout UserListState, replaying: Bool = false) {
        let search = updated.search
        // The store's rule (TextKey.matches: a substring of the folded name or email), so a live
        // change matches as a reload would.
        let matchesSearch = { (user: User) in
            search.map { TextKey.matches($0, name: user.name, email: user.email) } ?? true
        }
        switch change {
        case .saved(let user):
            guard let index = updated.users.firstIndex(where: { $0.id == user.id }) else {
                // Not on screen: it may now sort into the loaded rows, or newly match the search.
                guard matchesSearch(user) else { return }
                if Self.insertSorted(user, into: &updated), !updated.hasMore, !updated.hasPrevious {
                    Self.adjustTotal(of: &updated, by: 1)
                }
                return
            }
            // The same save, or an older one arriving late (the feed can lag a reply): keep the newer row.
            if updated.users[index].version >= user.version { return }
            updated.users.remove(at: index)
            if matchesSearch(user) {
                Self.insertSorted(user, into: &updated)
            } else {
                Self.adjustTotal(of: &updated, by: -1)
            }
        case .added(let user):
            guard matchesSearch(user), !updated.users.contains(where: { $0.id == user.id }) else { return }
            if Self.insertSorted(user, into: &updated) || !replaying {
                Self.adjustTotal(of: &updated, by: 1)
            }
        case .removed(let id):
            if let index = updated.users.firstIndex(where: { $0.id == id }) {
                updated.users.remove(at: index)
                Self.adjustTotal(of: &updated, by: -1)
            } else if !replaying && (updated.hasMore || updated.hasPrevious) {
                Self.adjustTotal(of: &updated, by: -1)  // on a page not loaded yet
            }
        case .resync:
            break
        }
    }

    // MARK: ordering

    /// Inserts `user` at its place in the loaded rows; returns false when that place is past the
    /// loaded rows and more pages exist, or before them and earlier pages exist (the page that
    /// holds it will bring it).
    @discardableResult
    static func insertSorted(_ user: User, into state: inout UserListState) -> Bool {
        let key = SortKey(user)
        // Most changes of a big import land past the loaded rows (or before them): a comparison
        // with the edge row settles those without the search.
        if state.hasMore, let last = state.users.last, !(key < SortKey(last)) { return false }
        if state.hasPrevious, let first = state.users.first, key < SortKey(first) { return false }
        // The rows are in the store's order: a binary search folds O(log n) names, not n.
        var low = state.users.startIndex, high = state.users.endIndex
        while low < high {
            let middle = (low + high) / 2
            if key < SortKey(state.users[middle]) { high = middle } else { low = middle + 1 }
        }
        let index = low
        if index == state.users.endIndex && state.hasMore { return false }
        if index == state.users.startIndex && state.hasPrevious { return false }
        state.users.insert(user, at: index)
        return true
    }

    /// The store's order: the folded name (`TextKey`) as UTF-8 bytes, then the id (as its
    /// uppercase string sorts, which is the order of its bytes: compared without making strings).
    private struct SortKey {
        let name: [UInt8]
        let id: UUID
        init(_ user: User) {
            name = TextKey.foldedUTF8(user.name)
            id = user.id
        }
        static func < (a: SortKey, b: SortKey) -> Bool {
            if a.name != b.name { return a.name.lexicographicallyPrecedes(b.name) }
            return withUnsafeBytes(of: a.id.uuid) { x in
                withUnsafeBytes(of: b.id.uuid) { y in x.lexicographicallyPrecedes(y) }
            }
        }
    }

    static func adjustTotal(of state: inout UserListState, by delta: Int) {
        if let total = state.totalCount { state.totalCount = max(0, total + delta) }
    }
}
