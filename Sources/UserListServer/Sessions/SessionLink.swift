/// A session, for what must not keep it alive (the presence board): it holds the link weakly,
/// and the link holds the session `unowned`. (The loop's change feed holds sessions strongly
/// and lets go of the ones only it holds; see `LoopChangeFeed.sessions`.)
///
/// Why not hold the session weakly: an object that is weakly referenced moves its reference
/// counts to a side table, and every retain and release of it takes the slow path from then on.
/// A session is retained and released several times per change it follows; in a fan-out to
/// thousands of sessions the slow path alone was 5 % of the loop's CPU (`perf`, `--only
/// sustained`). The session owns its link, so the link ends with it and the weak references go
/// nil then.
package final class SessionLink: Sendable {
    unowned let session: Session

    init(_ session: Session) {
        self.session = session
    }
}

/// A weak reference to a session's link: nil once the session has ended.
struct WeakSession {
    weak var link: SessionLink?

    init(_ session: Session) {
        link = session.link
    }

    var session: Session? { link?.session }
}
