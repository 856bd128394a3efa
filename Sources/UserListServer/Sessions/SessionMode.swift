import UserListPresentation

/// What a session is doing: the one value that says it, and every transition it makes.
///
/// A session is waiting for its first client, running, or finished (handed on or told
/// goodbye; it then still follows changes, so what it saves stays current, but writes nothing
/// and shows no presence). While running it is doing one thing at a time on its actor, `Work`,
/// and it may hold replies until its list's first page is on the screens.
struct SessionMode {
    /// What a restart saved, which the screens start from.
    typealias Restoring = (state: NavigationState, listWindow: UserListWindow?)
    /// A reply and the client it goes to.
    typealias HeldReply = (client: any SessionClient, reply: SessionReply)

    enum Life {
        /// No client has attached since it was made (or restored): its screens have not started.
        case waiting(restoring: Restoring?)
        /// Its screens run and its clients are written. `heldForFirstPage`: replies waiting for
        /// the list's first load (nil once it is on the screens; see `Session.reply(_:to:)`).
        case running(Work, heldForFirstPage: [HeldReply]?)
        case finished
    }

    /// What a running session is in the middle of.
    enum Work {
        case idle
        /// A state change scheduled a flush, which more changes of the same turn join.
        case flushScheduled
        /// Performing an intent's synchronous part, or applying a batch of changes: the caller
        /// flushes when it ends, so a state change meanwhile schedules nothing.
        case handlingIntent, applyingChanges
    }

    private(set) var life: Life

    init(restoring: Restoring?) {
        life = .waiting(restoring: restoring)
    }

    /// Whether its clients are written: the one question the fan-out asks.
    var isRunning: Bool {
        if case .running = life { true } else { false }
    }

    var isFinished: Bool {
        if case .finished = life { true } else { false }
    }

    /// What a restored session's screens will start from, until they do.
    var restoring: Restoring? {
        if case .waiting(let restoring) = life { restoring } else { nil }
    }

    /// Starts the screens, once: what to restore them from (nil: load the first page, whose
    /// replies are held until `firstPageLoaded`). Nil when it was not waiting.
    mutating func start() -> (restoring: Restoring?, loadsFirstPage: Bool)? {
        guard case .waiting(let restoring) = life else { return nil }
        life = .running(.idle, heldForFirstPage: restoring == nil ? [] : nil)
        return (restoring, restoring == nil)
    }

    /// Enters `work` (an intent, a batch of changes); returns what to go back to with `end`.
    mutating func begin(_ work: Work) -> Work? {
        guard case .running(let before, let held) = life else { return nil }
        life = .running(work, heldForFirstPage: held)
        return before
    }

    mutating func end(returningTo before: Work?) {
        guard let before, case .running(_, let held) = life else { return }
        life = .running(before, heldForFirstPage: held)
    }

    /// A state change: whether to schedule a flush (none is scheduled, and no caller flushes).
    mutating func scheduleFlush() -> Bool {
        guard case .running(.idle, let held) = life else { return false }
        life = .running(.flushScheduled, heldForFirstPage: held)
        return true
    }

    /// The scheduled flush runs.
    mutating func scheduledFlushRuns() {
        guard case .running(.flushScheduled, let held) = life else { return }
        life = .running(.idle, heldForFirstPage: held)
    }

    /// Holds `reply` if the first page is still loading (or replies are held before it); false
    /// when it may go now.
    mutating func hold(_ reply: HeldReply) -> Bool {
        guard case .running(let work, var held?) = life else { return false }
        held.append(reply)
        life = .running(work, heldForFirstPage: held)
        return true
    }

    /// The first page is on the screens: the replies held for it, in order.
    mutating func firstPageLoaded() -> [HeldReply] {
        guard case .running(let work, let held?) = life else { return [] }
        life = .running(work, heldForFirstPage: nil)
        return held
    }

    /// Handed on or told goodbye; false when it already was.
    mutating func finish() -> Bool {
        guard !isFinished else { return false }
        life = .finished
        return true
    }
}
