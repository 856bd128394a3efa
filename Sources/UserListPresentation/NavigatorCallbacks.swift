import Foundation
import UserListDomain

/// What the navigator's screens call back through: the host's callbacks and the navigator's own
/// reactions, in a box the screens hold strongly.
///
/// Not the navigator itself, weakly: a weakly referenced object moves its reference counts to a
/// side table, and every retain and release of it takes the slow path; a daemon retains each
/// session's navigator several times per change it follows (a fan-out to thousands). The
/// navigator empties the box when it ends, so a screen that outlives it (a load still
/// finishing) calls nothing.
final class NavigatorCallbacks {
    var onStateChange: (() -> Void)?
    var onEvent: ((NavigatorEvent) -> Void)?
    /// The list chose a row (`selectRow` opens it).
    var selected: ((UUID) -> Void)?
    /// The detail screen saved: the list shows it at once.
    var saved: ((User) -> Void)?

    func clear() {
        onStateChange = nil
        onEvent = nil
        selected = nil
        saved = nil
    }
}
