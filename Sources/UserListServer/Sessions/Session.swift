import Foundation
import UserListDomain
import UserListPresentation
import UserListWire
import ThreadLocks

/// One session: a navigator with its screens, and the clients attached to it.
///
/// Each session is its own actor, so sessions never wait on each other, and its executor is the
/// event loop it was created on (`loop`): its intents, its loads' and saves' continuations and
/// the changes its loop publishes all run on that one thread, so its state has one owner and
/// needs no lock. After every intent, every async completion and every batch of changes the
/// session diffs its state document against what it last sent and sends each client one patch
/// with the next sequence number.
///
/// A client on another loop (a second terminal attached with the same session key) is written
/// through a job on its own loop (`Connection.send` hops): each socket is still written by its
/// own loop's thread, at the cost of one wake-up for that client.
package actor Session {
    package struct Attached {
        let client: any SessionClient
        var epoch: Int
        var seq: Int
        /// The client's queue overflowed: it gets a snapshot when it drains, and no patches until then.
        var awaitingSnapshot = false
    }

    /// Counts the registry reads without entering the actor (retention sweeps, status).
    package struct Activity: Sendable {
        var clients = 0
        var detachedAt: ContinuousClock.Instant? = .now
        var lastActive: ContinuousClock.Instant = .now
        var screens = 1
        /// The user whose screen the session shows, and whether that screen holds unsaved
        /// changes: known attached or not (`userctl sessions` marks the drafts being kept).
        var open: (user: UUID, draft: Bool)?
    }

    package let key: SessionKey
    package let id: String
    /// The event loop whose thread runs this actor.
    package nonisolated let loop: EventLoop
    package nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    /// Asked at every intent that would write, so a change of group membership (or of the
    /// admin group) takes effect without reattaching. The welcome's `access` is its answer at
    /// attach time.
    package nonisolated let canWrite: @Sendable () -> Bool
    /// Whether the session may not write, as things stand now.
    package nonisolated var readOnly: Bool { !canWrite() }
    package nonisolated let activity = Lock(Activity())
    /// What the loop's feed and the presence board hold instead of the session (`SessionLink`).
    /// Set once, at the end of `init`.
    package nonisolated(unsafe) private(set) var link: SessionLink!

    /// Its screens' and commands' use cases, recorded as its author's (`reauthor` renames the client).
    var useCases: UserUseCases
    let changes: ChangeBroadcaster
    let logger: Logger
    /// What the session is doing (`SessionMode`: its life, its work, the replies it holds).
    var mode: SessionMode
    /// The state every attached client has (or will have once its pending frames are read).
    /// Kept as the typed state, not its JSON: it shares storage with the screens' own state,
    /// and the next patch is computed from it by `StateDiff`.
    var sent: NavigationState?
    var clients: [ObjectIdentifier: Attached] = [:]
    var navigator: Navigator
    /// Encoded event frames waiting for the next flush.
    var pendingEvents: [[UInt8]] = []
    /// Writes this session is making: the feed's deliveries of their changes are applied
    /// without a `changed` event and without marking the list stale (§4.2: `changed` reports a
    /// change made by someone else).
    var writesInFlight: [CommitReceipt] = []
    let frameEncoder = FrameEncoder(maximumFrameSize: FrameLimits.serverToClient)
    /// Where each new state goes to survive a crash (nil: saved only at a clean shutdown).
    let journal: SessionJournal?
    /// Where sessions of this daemon publish who has which user open, and read who else has
    /// (also on other daemons sharing the store) (nil: no presence shown).
    nonisolated let presenceBoard: PresenceBoard?
    /// What this session shows of the others, and the `present` its clients were last sent.
    var presence = SessionPresence()
    var presentSent: [SessionPresence.Person] = []
    /// What this session last put on the board.
    var published: (user: UUID, editing: Bool)?

    package init(key: SessionKey, id: String = UUID().uuidString.lowercased(), loop: EventLoop,
                 canWrite: @escaping @Sendable () -> Bool,
                 useCases: UserUseCases, changes: ChangeBroadcaster, logger: Logger,
                 restoring saved: NavigationState? = nil, listWindow: UserListWindow? = nil,
                 journal: SessionJournal? = nil, presence: PresenceBoard? = nil) {
        self.journal = journal
        self.presenceBoard = presence
        self.key = key
        self.id = id
        self.loop = loop
        self.canWrite = canWrite
        self.useCases = useCases
        self.changes = changes
        self.logger = logger
        self.navigator = Navigator(useCases: useCases)
        self.mode = SessionMode(restoring: saved.map { ($0, listWindow) })
        self.link = SessionLink(self)
        if let saved {  // `userctl sessions` before it starts
            activity.withLock { ($0.screens, $0.open) = (saved.screens.count, Self.openUser(in: saved)) }
        }
    }

    deinit { presenceBoard?.leave(id) }

    /// A state to save, how far its list was read (a restore reads as far again), and the client
    /// name its writes are recorded with.
    package typealias Saved = (state: NavigationState, listWindow: UserListWindow?, client: String?)

    /// What to save across a daemon restart. A session restored whose screens have not started
    /// (nobody came back yet) still has what it was restored from: a second restart keeps its
    /// screens and drafts.
    package var saved: Saved {
        if let restoring = mode.restoring { return (restoring.state, restoring.listWindow, clientName) }
        return (navigator.state, SessionJournal.listWindow(of: navigator.state), clientName)
    }

    /// The client name its writes are recorded with (history's `client`).
    var clientName: String? { useCases.author?.client }


    // MARK: attach and detach

    /// Adds a client and sends it a snapshot in `epoch` (the one its welcome named). The first
    /// attach starts the screens. `name`: the client's name from its hello, which the session's
    /// writes are recorded with from now on.
    package func attach(_ client: any SessionClient, epoch: Int = EpochSource.next(), name: String? = nil) {
        let renamed = reauthor(client: name)
        startIfNeeded()
        navigator.isReadOnly = readOnly  // its screens say "read-only" and take no edits
        flush()  // bring existing clients up to date first, so `sent` is current
        let document = document(sent ?? navigator.state)
        clients[ObjectIdentifier(client)] = Attached(client: client, epoch: epoch, seq: 0)
        client.send(.snapshot(.init(epoch: epoch, seq: 0, state: document)), droppable: false)
        activity.withLock {
            $0.clients = clients.count
            $0.detachedAt = nil
            $0.lastActive = .now
        }
        journal?.attachmentChanged(key: key, detachedAt: nil, client: renamed ? name : nil)
        flush()  // its presence, now that a client shows it
    }

    /// Records the session's writes as made by the client `name` (the attaching client's wins):
    /// a restored session otherwise has only the name it was saved with, none from older files,
    /// and a session reattached under another name went on writing as its first client. Returns
    /// whether the name changed.
    private func reauthor(client name: String?) -> Bool {
        guard let name, var author = useCases.author, author.client != name else { return false }
        author.client = name
        useCases = useCases.authored(by: author)
        navigator.reauthor(useCases)  // its screens (a restored one's are built from `useCases` at start)
        return true
    }

    /// Lets a client go. It first gets every change already made (a presence notification
    /// whose flush is still scheduled, say), so that a client told goodbye next holds the state
    /// the session had when it left, whichever loop the change came from.
    package func detach(_ client: any SessionClient) {
        guard clients[ObjectIdentifier(client)] != nil else { return }
        flush()
        clients[ObjectIdentifier(client)] = nil
        activity.withLock {
            $0.clients = clients.count
            if clients.isEmpty { $0.detachedAt = .now }
        }
        if clients.isEmpty {
            journal?.attachmentChanged(key: key, detachedAt: Date())
            publishPresence(sent ?? navigator.state, shown: false)
        }
    }

    /// A fresh snapshot for one client: on resync, or after its queue overflowed and drained.
    package func resendSnapshot(to client: any SessionClient) {
        guard var attached = clients[ObjectIdentifier(client)] else { return }
        flush()
        attached.epoch = EpochSource.next()
        attached.seq = 0
        attached.awaitingSnapshot = false
        clients[ObjectIdentifier(client)] = attached
        client.send(.snapshot(.init(epoch: attached.epoch, seq: 0, state: document(sent ?? navigator.state))),
                    droppable: true)
    }

    /// Marks a client whose patches were dropped: no more patches until its snapshot.
    package func clientOverflowed(_ client: any SessionClient) {
        clients[ObjectIdentifier(client)]?.awaitingSnapshot = true
    }

    /// A restart that no client notices (see `Handover`): the state every client holds now,
    /// and where each client's stream is. Their connections move to the next process.
    package func handOver() -> (state: NavigationState, streams: [HandedStream]) {
        flush()
        if mode.finish() {  // the streams belong to the next process now
            endPresence()
            sendChanges(navigator.state)  // presence cleared: the next process knows nothing of it
        }
        return (sent ?? navigator.state, clients.values.map {
            HandedStream(client: $0.client, epoch: $0.epoch, seq: $0.seq, awaitingSnapshot: $0.awaitingSnapshot)
        })
    }

    package struct HandedStream: Sendable {
        package let client: any SessionClient
        package let epoch: Int
        package let seq: Int
        package let awaitingSnapshot: Bool
    }

    /// A client the previous process handed over, holding `state` at (`epoch`, `seq`): no
    /// welcome and no snapshot; its stream goes on in the same epoch. If the session has moved
    /// on from `state` (restored screens reloading, another client adopted first), the client
    /// gets the difference as its next patch. One that was owed a snapshot gets it now.
    package func adopt(_ client: any SessionClient, epoch: Int, seq: Int, holding state: NavigationState,
                       awaitingSnapshot: Bool) {
        if case .waiting = mode.life {
            startIfNeeded()
            // The next patch goes from what the clients hold to the restored screens once they
            // have reloaded (not through the empty "loading" list in between).
            sent = state
        } else {
            flush()  // `sent` current, and the clients already here up to date
        }
        var attached = Attached(client: client, epoch: epoch, seq: seq, awaitingSnapshot: awaitingSnapshot)
        clients[ObjectIdentifier(client)] = attached
        activity.withLock {
            $0.clients = clients.count
            $0.detachedAt = nil
            $0.lastActive = .now
        }
        journal?.attachmentChanged(key: key, detachedAt: nil)
        guard !awaitingSnapshot else { return resendSnapshot(to: client) }
        let ops = StateDiff.serializedOps(from: state, to: sent ?? navigator.state)
        guard !ops.isEmpty else { return }
        attached.seq += 1
        do {
            let frame = try frameEncoder.patchFrame(epoch: epoch, seq: attached.seq, serializedOperations: ops)
            clients[ObjectIdentifier(client)] = attached
            client.sendFrames([(frame, true)])
        } catch {
            resendSnapshot(to: client)
        }
    }

    /// Runs `body` on this session from its loop's thread, which is its actor's executor: what
    /// `assumeIsolated` does, without asking the runtime which executor is current (a fan-out
    /// enters every session of the loop per change). Stops the daemon anywhere else.
    package nonisolated func enterOnLoop(_ body: (isolated Session) -> Void) {
        precondition(loop.isLoopThread, "a session entered off its event loop")
        withoutActuallyEscaping(body) { body in
            // The same function: `isolated` only says the caller is on the actor's executor.
            unsafeBitCast(body, to: ((Session) -> Void).self)(self)
        }
    }

    /// Runs `body` on this session's actor (a caller off its loop: a connection's ordered task).
    package func perform(_ body: @Sendable (isolated Session) -> Void) {
        body(self)
    }

    /// Tells every client the daemon is going away.
    package func sayGoodbye(reason: String) {
        if mode.finish() { endPresence(quietly: true) }
        for attached in clients.values {
            attached.client.send(.goodbye(reason: reason), droppable: false)
        }
    }

    /// Waits for saves in flight (shutdown: finish what was acknowledged as started).
    package func finishInFlightWork() async {
        for case .detail(let detail) in navigator.screens {
            await detail.finishSaving()
        }
    }
}
