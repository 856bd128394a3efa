import Foundation
import Synchronization
import UserListDomain
import UserListPresentation
import UserListWire

/// One session: a navigator with its screens, and the clients attached to it.
///
/// Each session is its own actor, so sessions never wait on each other. After every intent and
/// every async completion the session diffs its state document against what it last sent and
/// sends each client one patch with the next sequence number.
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
    }

    package let key: SessionKey
    package let id: String
    /// Asked at every intent that would write, so a change of group membership (or of the
    /// admin group) takes effect without reattaching. The welcome's `access` is its answer at
    /// attach time.
    package nonisolated let canWrite: @Sendable () -> Bool
    /// Whether the session may not write, as things stand now.
    package nonisolated var readOnly: Bool { !canWrite() }
    package nonisolated let activity = Mutex(Activity())

    let useCases: UserUseCases
    private let changes: ChangeBroadcaster
    private let logger: Logger
    private var navigator: Navigator
    /// What a restart saved, until the screens start from it.
    private var restored: (state: NavigationState, listWindow: UserListWindow?)?
    private var started = false
    /// The state every attached client has (or will have once its pending frames are read).
    /// Kept as the typed state, not its JSON: it shares storage with the screens' own state,
    /// and the next patch is computed from it by `StateDiff`.
    private var sent: NavigationState?
    private var clients: [ObjectIdentifier: Attached] = [:]
    private var flushScheduled = false
    /// Performing an intent's synchronous part: `handle` flushes right after it.
    private var handlingIntent = false
    private var applyingChange = false
    /// The broadcaster's encoded `changed` event for the change being applied.
    private var changedEventFrame: [UInt8]?
    /// Encoded event frames waiting for the next flush.
    private var pendingEvents: [[UInt8]] = []
    /// This session's listener on the broadcaster, while it follows changes.
    private var listenerID: UInt64?
    /// Changes committed anywhere, on their way to this actor, or sent by the broadcaster
    /// itself while the session is idle (`followWhileIdle`).
    private var feed: SessionFeed?
    /// Intents whose asynchronous part is still running (the screens are not idle).
    private var intentsInFlight = 0
    /// Handed over or saying goodbye: the broadcaster must not write to the clients any more.
    private var frozen = false
    /// Writes this session is making: the feed's deliveries of their changes are applied
    /// without a `changed` event and without marking the list stale (§4.2: `changed` reports a
    /// change made by someone else).
    private var ownWrites: [OwnWrite] = []
    private var ownWriteCount = 0
    private let frameEncoder = FrameEncoder(maximumFrameSize: FrameLimits.serverToClient)
    /// Where each new state goes to survive a crash (nil: saved only at a clean shutdown).
    private let journal: SessionJournal?

    package init(key: SessionKey, id: String = UUID().uuidString.lowercased(),
                 canWrite: @escaping @Sendable () -> Bool,
                 useCases: UserUseCases, changes: ChangeBroadcaster, logger: Logger,
                 restoring saved: NavigationState? = nil, listWindow: UserListWindow? = nil, journal: SessionJournal? = nil) {
        self.journal = journal
        self.key = key
        self.id = id
        self.canWrite = canWrite
        self.useCases = useCases
        self.changes = changes
        self.logger = logger
        self.navigator = Navigator(useCases: useCases)
        self.restored = saved.map { ($0, listWindow) }
    }

    deinit { if let listenerID { changes.detach(listenerID) } }

    /// How many changes reached this session's clients straight from the broadcaster's thread,
    /// while the session was idle (tests: the fan-out took the short path).
    package var changesSentWhileIdle: Int { feed?.sentByBroadcaster.load(ordering: .relaxed) ?? 0 }

    /// The state to save across a daemon restart.
    package var savedState: NavigationState {
        reclaim()
        defer { followWhileIdle() }
        return navigator.state
    }


    // MARK: attach and detach

    /// Adds a client and sends it a snapshot in `epoch` (the one its welcome named). The first
    /// attach starts the screens.
    package func attach(_ client: any SessionClient, epoch: Int = EpochSource.next()) {
        reclaim()
        defer { followWhileIdle() }
        startIfNeeded()
        flush()  // bring existing clients up to date first, so `sent` is current
        let document = StateDocument.make(sent ?? navigator.state)
        clients[ObjectIdentifier(client)] = Attached(client: client, epoch: epoch, seq: 0)
        client.send(.snapshot(.init(epoch: epoch, seq: 0, state: document)), droppable: false)
        activity.withLock {
            $0.clients = clients.count
            $0.detachedAt = nil
            $0.lastActive = .now
        }
        journal?.attachmentChanged(key: key, detachedAt: nil)
    }

    package func detach(_ client: any SessionClient) {
        reclaim()
        defer { followWhileIdle() }
        guard clients.removeValue(forKey: ObjectIdentifier(client)) != nil else { return }
        activity.withLock {
            $0.clients = clients.count
            if clients.isEmpty { $0.detachedAt = .now }
        }
        if clients.isEmpty { journal?.attachmentChanged(key: key, detachedAt: Date()) }
    }

    /// A fresh snapshot for one client: on resync, or after its queue overflowed and drained.
    package func resendSnapshot(to client: any SessionClient) {
        reclaim()
        defer { followWhileIdle() }
        guard var attached = clients[ObjectIdentifier(client)] else { return }
        flush()
        attached.epoch = EpochSource.next()
        attached.seq = 0
        attached.awaitingSnapshot = false
        clients[ObjectIdentifier(client)] = attached
        client.send(.snapshot(.init(epoch: attached.epoch, seq: 0, state: StateDocument.make(sent ?? navigator.state))), droppable: true)
    }

    /// Marks a client whose patches were dropped: no more patches until its snapshot.
    package func clientOverflowed(_ client: any SessionClient) {
        reclaim()
        clients[ObjectIdentifier(client)]?.awaitingSnapshot = true
    }

    /// A restart that no client notices (see `Handover`): the state every client holds now,
    /// and where each client's stream is. Their connections move to the next process.
    package func handOver() -> (state: NavigationState, streams: [HandedStream]) {
        reclaim()
        frozen = true  // the streams belong to the next process now
        flush()
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
    package func adopt(_ client: any SessionClient, epoch: Int, seq: Int, holding state: NavigationState, awaitingSnapshot: Bool) {
        reclaim()
        defer { followWhileIdle() }
        if !started {
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

    /// Tells every client the daemon is going away.
    package func sayGoodbye(reason: String) {
        reclaim()
        frozen = true
        for attached in clients.values {
            attached.client.send(.goodbye(reason: reason), droppable: false)
        }
    }

    /// Waits for saves in flight (shutdown: finish what was acknowledged as started).
    package func finishInFlightWork() async {
        reclaim()
        for case .detail(let detail) in navigator.screens {
            await detail.finishSaving()
        }
    }

    // MARK: state streaming

    private func startIfNeeded() {
        guard !started else { return }
        started = true
        if let saved = restored {
            navigator = Navigator(restoring: saved.state, listWindow: saved.listWindow, useCases: useCases)
            restored = nil
        } else {
            navigator.list.onAppear()
        }
        navigator.onStateChange = { [unowned self] in self.stateChanged() }
        navigator.onEvent = { [unowned self] event in self.forward(event) }
        let feed = SessionFeed { [weak self] in Task { await self?.takeChanges() } }
        self.feed = feed
        listenerID = changes.attach(feed)
        sent = navigator.state
    }

    /// Hands the list and the clients' streams to the broadcaster while nothing but changes
    /// made elsewhere can move them: only the list is shown, no load or intent is in flight,
    /// nothing is waiting to be flushed, and every client is in step.
    private func followWhileIdle() {
        guard let feed, !frozen, !flushScheduled, !applyingChange, pendingEvents.isEmpty, ownWrites.isEmpty,
              intentsInFlight == 0, navigator.screens.count == 1, case .list(let list) = navigator.screens[0],
              let follower = list.follower, let sent, sent.screens.count == 1, case .list(let shown) = sent.screens[0],
              SharedListOutcomes.isSameValue(shown, follower.state),
              clients.values.allSatisfy({ !$0.awaitingSnapshot })
        else { return }
        let streams = clients.map { SessionFeed.Stream(key: $0.key, client: $0.value.client, epoch: $0.value.epoch, seq: $0.value.seq) }
        feed.follow(.init(list: follower, streams: streams))
    }

    /// Takes the screens back from the broadcaster before the session does anything: the list
    /// ViewModel takes the state that was sent meanwhile, and each client's stream goes on from
    /// where the broadcaster left it.
    private func reclaim() {
        guard let following = feed?.reclaim() else { return }
        // Only the list was shown while it was handed over, and its clients have the events.
        applyingChange = true
        navigator.list.catchUp(to: following.list)
        applyingChange = false
        sent = NavigationState(screens: [.list(following.list.state)])
        for stream in following.streams { clients[stream.key]?.seq = stream.seq }
    }

    /// Changes committed anywhere, as many as arrived since the last batch: every screen
    /// follows them, then each client gets one patch and the `changed` events together, in one
    /// write (an import's thousands of changes become a few patches, not thousands).
    private func takeChanges() {
        reclaim()
        defer { followWhileIdle() }
        guard let batch = feed?.take(), !batch.isEmpty else { return }
        applyingChange = true
        for delivery in batch {
            changedEventFrame = delivery.eventFrame
            navigator.apply(delivery.change, madeHere: claimOwnChange(delivery.change), sharing: delivery.lists)
        }
        changedEventFrame = nil
        applyingChange = false
        flush(sharing: batch.count == 1 ? batch[0].patches : nil)
    }

    /// Coalesces the several changes one completion can make into one patch. An intent's own
    /// changes are flushed by `handle` itself.
    private func stateChanged() {
        guard !applyingChange, !handlingIntent, !flushScheduled else { return }
        flushScheduled = true
        Task { self.flushScheduledChanges() }
    }

    private func flushScheduledChanges() {
        flushScheduled = false
        flush()
        followWhileIdle()
    }

    /// Diffs and sends one patch to every client that is in step, followed by the events that
    /// describe the new state.
    ///
    /// `sharing`: the patches other sessions serialized for the change just applied; a session
    /// that showed and now shows the same list as one of them sends the same bytes.
    package func flush(sharing patches: SharedPatches? = nil) {
        reclaim()
        let current = navigator.state
        let previous = sent
        var serializedOps: [UInt8] = []
        if let previous {
            if let shared = patches?.operations(from: previous, to: current) {
                serializedOps = shared
            } else {
                serializedOps = StateDiff.serializedOps(from: previous, to: current)
                patches?.record(from: previous, to: current, serializedOps)
            }
        }
        sent = current
        let events = pendingEvents
        pendingEvents.removeAll()
        let changed = !serializedOps.isEmpty
        guard changed || !events.isEmpty else { return }
        if changed {
            activity.withLock { $0.screens = current.screens.count }
            // Handed over, written off this path; a list merely following others' saves is not
            // worth a hand-over (a restore reloads the rows anyway).
            if let journal, SessionJournal.restoreChanged(from: previous, to: current) {
                journal.record(key: key, id: id, state: current)
            }
        }
        let eventFrames = events.map(OutgoingFrame.init)
        for (id, var attached) in clients {
            var frames: [(frame: OutgoingFrame, droppable: Bool)] = []
            if changed && !attached.awaitingSnapshot {
                attached.seq += 1
                clients[id] = attached
                do {
                    frames.append((try frameEncoder.patchFrame(epoch: attached.epoch, seq: attached.seq, serializedOperations: serializedOps), true))
                } catch {
                    // The client's state is now behind: tell it; its resync brings it back.
                    reportUnsendable("patch", error, to: attached.client)
                    attached.awaitingSnapshot = true
                    clients[id] = attached
                }
            }
            for frame in eventFrames { frames.append((frame, false)) }  // events are never dropped (§7)
            if !frames.isEmpty { attached.client.sendFrames(frames) }
        }
    }

    private func forward(_ event: NavigatorEvent) {
        let message: ServerMessage.Event
        switch event {
        case .list(.userSelected(let id)):
            message = .init(screen: "list", name: "user_selected", payload: ["id": .string(UUIDText.lowercase(id))])
        case .detail(.didSave(let user)):
            message = .init(screen: "detail", name: "did_save", payload: ["user": StateDocument.user(user)])
        case .changed(let change):
            // Encoded once for all sessions by the broadcaster, when the change came from it.
            if let frame = changedEventFrame {
                pendingEvents.append(frame)
                stateChanged()
                return
            }
            guard let changed = ChangeBroadcaster.event(for: change) else { return }  // a resync: the patch says it all
            message = changed
        }
        // Sent with the next patch, after it: the event describes the state the patch brings.
        do {
            pendingEvents.append(try frameEncoder.encode(ServerMessage.event(message)))
        } catch {
            for attached in clients.values { reportUnsendable("event \(message.name)", error, to: attached.client) }
        }
        stateChanged()
    }

    /// A frame that could not be encoded (over the 16 MiB limit): logged, and the client told
    /// with an `internal` error rather than left waiting for something that never comes.
    private func reportUnsendable(_ what: String, _ error: any Error, to client: any SessionClient) {
        logger.error("A \(what) frame could not be encoded: \(error)", ["USERLISTD_SESSION": id])
        client.send(.error(.init(code: .internal, message: "The daemon could not send a \(what) (it is over the frame size limit); resync to get the current state.")), droppable: false)
    }

    // MARK: intents

    /// Performs one intent and replies to `client` when its outcome is known. Every patch the
    /// intent causes is sent before its reply (loads and saves reply once they finish; the
    /// state patches flow meanwhile).
    package func handle(_ message: ClientMessage.Intent, from client: any SessionClient) {
        reclaim()
        activity.withLock { $0.lastActive = .now }
        let outcome: Outcome
        do throws(IntentError) {
            let intent = try Intent(message)
            if intent.writes && !canWrite() {
                throw IntentError(.readOnly, "This session is read-only: '\(message.action)' needs root or membership of the admin group.")
            }
            handlingIntent = true
            defer { handlingIntent = false }
            outcome = try perform(intent)
        } catch {
            outcome = .failed(error.code, error.message)
        }
        flush()
        switch outcome {
        case .done(let result):
            client.send(.reply(.success(id: message.id, result: result)), droppable: false)
            followWhileIdle()
        case .failed(let code, let text):
            client.send(.reply(.failure(id: message.id, code: code, message: text)), droppable: false)
            followWhileIdle()
        case .pending(let work):
            intentsInFlight += 1
            Task {
                let finished = await work(self)
                self.flush()
                switch finished {
                case .success(let result):
                    client.send(.reply(.success(id: message.id, result: result)), droppable: false)
                case .failure(let error):
                    client.send(.reply(.failure(id: message.id, code: error.code, message: error.message)), droppable: false)
                }
                self.intentsInFlight -= 1
                self.followWhileIdle()
            }
        }
    }

    enum Outcome {
        case done(JSONValue?)
        case failed(ErrorCode, String)
        /// Runs on this actor after the intent's synchronous part.
        case pending((isolated Session) async -> Result<JSONValue?, IntentError>)
    }

    private func perform(_ intent: Intent) throws(IntentError) -> Outcome {
        switch intent {
        case .list(let list): return try perform(list)
        case .detail(let detail):
            guard let screen = navigator.topDetail else {
                throw IntentError(.unknownScreen, "No detail screen is open; open a user first.")
            }
            return perform(detail, on: screen)
        case .session(let session): return perform(session)
        }
    }

    private func perform(_ intent: ListIntent) throws(IntentError) -> Outcome {
        let list = navigator.list
        switch intent {
        case .onAppear: return Self.outcome(of: list.onAppear())
        case .refresh: return Self.outcome(of: list.refresh())
        case .showLastPage: return Self.outcome(of: list.showLastPage())
        case .search(let text): return Self.outcome(of: list.search(text))
        case .didDisplayRow(let index):
            guard list.hasRow(at: index) else { throw Self.noRow(index, rows: list.state.users.count) }
            return Self.outcome(of: list.didDisplayRow(at: index))
        case .didSelectRow(let index):
            guard list.hasRow(at: index) else { throw Self.noRow(index, rows: list.state.users.count) }
            return .pending { session in
                switch await session.navigator.selectRow(at: index) {
                case .success(let user)?: .success(StateDocument.user(user))
                case .failure(let error)?: .failure(IntentError(error))
                case nil: .failure(Self.noRow(index, rows: session.navigator.list.state.users.count))
                }
            }
        case .dismissError:
            list.dismissError()
            return .done(nil)
        case .addUser(let new):
            return .pending { session in
                await session.write(.added(new.id)) { session in
                    let result = await session.navigator.list.addUser(new)
                    return result.map { user in (StateDocument.user(user), .added(user)) }
                }
            }
        case .removeUser(let id):
            return .pending { session in
                await session.write(.removed(id)) { session in
                    await session.navigator.list.removeUser(id: id).map { (nil, .removed(id: id)) }
                }
            }
        }
    }

    private func perform(_ intent: DetailIntent, on detail: UserDetailViewModel) -> Outcome {
        switch intent {
        case .setDraftName(let name):
            detail.setDraftName(name)
            return .done(nil)
        case .save:
            let id = detail.userID
            let before = detail.state.user
            let write = expectOwnChange(of: [id])
            let saving = detail.save()
            return .pending { session in
                let result = await saving.value
                switch result {
                case .success(let saved) where saved == before:
                    session.forget(write)  // nothing to save: nothing was written
                case .success:
                    // The screens show it already; waiting for the feed's (silent) copy means
                    // that once the reply is read, no later frame is about this save.
                    _ = await session.awaitDeliveries(of: write, count: 1)
                case .failure:
                    session.forget(write)
                }
                return result.map(StateDocument.user).mapError(IntentError.init)
            }
        case .dismissError:
            detail.dismissError()
            return .done(nil)
        case .back:
            navigator.back()
            return .done(nil)
        case .onAppear:
            let load = detail.onAppear()
            return .pending { _ in await load.value.map { _ in nil }.mapError(IntentError.init) }
        }
    }

    private func perform(_ intent: SessionIntent) -> Outcome {
        switch intent {
        case .openUser(let id):
            return .pending { session in
                await session.navigator.openUser(id).map(StateDocument.user).mapError(IntentError.init)
            }
        case .back:
            navigator.back()
            return .done(nil)
        case .offerDraft(let id, let name, let baseVersion):
            return .pending { session in await session.takeOfferedDraft(id: id, name: name, baseVersion: baseVersion) }
        case .exportPage(let request):
            return exportPage(request)
        case .findUsers(let request):
            return findUsers(request)
        case .importUsers(let users):
            let useCases = useCases
            return .pending { session in
                let write = session.expectOwnChange(of: Set(users.map(\.id)))
                let result: Result<Int, UserError>
                do throws(UserError) {
                    result = .success(try await useCases.importUsers.execute(users))
                } catch {
                    result = .failure(error)
                }
                switch result {
                case .success(let count):
                    _ = await session.awaitDeliveries(of: write, count: count)
                    return .success(["imported": .int(Int64(count))])
                case .failure(let error):
                    session.forget(write)
                    return .failure(IntentError(error))
                }
            }
        case .renameUser(let id, let name, let expectedVersion):
            let useCases = useCases
            return .pending { session in
                await session.write(.saved(id)) { _ in
                    do throws(UserError) {
                        var user = try await useCases.fetchUser.execute(id: id)
                        if let expectedVersion { user.version = expectedVersion }
                        let saved = try await useCases.update.rename(user, to: name)
                        return .success((StateDocument.user(saved), .saved(saved)))
                    } catch {
                        return .failure(error)
                    }
                }
            }
        case .addUser(let new):
            let useCases = useCases
            return .pending { session in
                await session.write(.added(new.id)) { _ in
                    do throws(UserError) {
                        let user = try await useCases.add.execute(new)
                        return .success((StateDocument.user(user), .added(user)))
                    } catch {
                        return .failure(error)
                    }
                }
            }
        case .removeUser(let id):
            let useCases = useCases
            return .pending { session in
                await session.write(.removed(id)) { _ in
                    do throws(UserError) {
                        try await useCases.remove.execute(id: id)
                        return .success((nil, .removed(id: id)))
                    } catch {
                        return .failure(error)
                    }
                }
            }
        }
    }

    /// A draft a client offers back after reattaching (the daemon lost it in a crash): taken,
    /// on that user's detail screen (opened if need be), only while the stored user is still at
    /// the version the draft was typed against; otherwise `conflict`, quoting the text.
    private func takeOfferedDraft(id: UUID, name: String, baseVersion: Int) async -> Result<JSONValue?, IntentError> {
        let stored: User
        do throws(UserError) {
            stored = try await useCases.fetchUser.execute(id: id)
        } catch {
            return .failure(IntentError(error))
        }
        guard stored.version == baseVersion else {
            return .failure(IntentError(.conflict, "Your unsaved name \"\(name)\" was typed on version \(baseVersion) of this user, which has changed since (now version \(stored.version), \"\(stored.name)\"); it was not put back. Type it again if you still want it."))
        }
        if let open = navigator.topDetail, open.userID != id, open.state.isDirty {
            return .failure(IntentError(.conflict, "Your unsaved name \"\(name)\" was not put back: this session now has another user's unsaved edit open."))
        }
        if navigator.topDetail?.userID != id, case .failure(let error) = await navigator.openUser(id) {
            return .failure(IntentError(error))
        }
        guard let detail = navigator.topDetail, detail.userID == id else {
            return .failure(IntentError(.conflict, "Your unsaved name \"\(name)\" was not put back: the session moved on while it was offered."))
        }
        detail.setDraftName(name)
        return .success(StateDocument.user(stored))
    }

    /// An outcome that waits for a list load.
    private static func outcome(of load: UserListViewModel.Load) -> Outcome {
        .pending { _ in await load.value.map { nil }.mapError(IntentError.init) }
    }

    private static func noRow(_ index: Int, rows: Int) -> IntentError {
        IntentError(.invalidArgs, "Row \(index) is not on screen; the list has \(rows) rows (0 to \(rows - 1)).")
    }

    // MARK: own writes

    /// Which user a write will change.
    enum WriteTarget {
        case added(UUID), saved(UUID), removed(UUID)
        var id: UUID {
            switch self { case .added(let id), .saved(let id), .removed(let id): id }
        }
    }

    /// Runs one write and returns once its change is on this session's screens (and so in the
    /// patches flushed before the reply): normally when the feed delivers it, at worst after a
    /// bounded wait, when the session applies it itself.
    private func write(_ target: WriteTarget,
                       _ body: (isolated Session) async -> Result<(JSONValue?, UserChange), UserError>) async -> Result<JSONValue?, IntentError> {
        let write = expectOwnChange(of: [target.id])
        switch await body(self) {
        case .success(let (result, change)):
            if !(await awaitDeliveries(of: write, count: 1)) {
                navigator.apply(change, madeHere: true)
            }
            return .success(result)
        case .failure(let error):
            forget(write)
            return .failure(IntentError(error))
        }
    }

    /// A write this session is about to make, registered before it starts so the feed's copy
    /// of its change, whenever it comes, is recognised.
    final class OwnWrite {
        let number: Int
        let ids: Set<UUID>
        let started = ContinuousClock.now
        var seen = 0
        /// How many changes the write made, once known.
        var expected: Int?
        var waiter: CheckedContinuation<Bool, Never>?
        init(number: Int, ids: Set<UUID>) {
            self.number = number
            self.ids = ids
        }
        var complete: Bool { expected.map { seen >= $0 } ?? false }
    }

    /// Registers a write; returns its number.
    private func expectOwnChange(of ids: Set<UUID>) -> Int {
        ownWriteCount += 1
        ownWrites.append(OwnWrite(number: ownWriteCount, ids: ids))
        return ownWriteCount
    }

    private func ownWrite(_ number: Int) -> OwnWrite? { ownWrites.first { $0.number == number } }

    private func forget(_ number: Int) {
        guard let write = ownWrite(number) else { return }
        ownWrites.removeAll { $0 === write }
        write.waiter?.resume(returning: false)
        write.waiter = nil
    }

    /// Whether `change` is one of this session's own writes (and counts it).
    private func claimOwnChange(_ change: UserChange) -> Bool {
        let now = ContinuousClock.now
        ownWrites.removeAll { $0.waiter == nil && now - $0.started > .seconds(60) }  // the feed lost it
        guard let id = change.userID, let write = ownWrites.first(where: { $0.ids.contains(id) && !$0.complete }) else { return false }
        write.seen += 1
        if write.complete {
            ownWrites.removeAll { $0 === write }
            write.waiter?.resume(returning: true)
            write.waiter = nil
        }
        return true
    }

    /// Waits until the feed has delivered `count` changes of `write` (at most a few seconds);
    /// returns whether it did.
    private func awaitDeliveries(of number: Int, count: Int) async -> Bool {
        // A store whose feed delivers on the writer's thread (SQLite) has posted the change
        // before the write returned: take it now rather than wait for the inbox's wake-up.
        takeChanges()
        guard let write = ownWrite(number) else { return false }
        write.expected = count
        if write.complete {
            ownWrites.removeAll { $0 === write }
            return true
        }
        let delivered = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            write.waiter = continuation
            Task { [weak self] in
                try? await Task.sleep(for: .seconds(5))
                await self?.giveUp(on: number)
            }
        }
        return delivered
    }

    private func giveUp(on number: Int) {
        // Kept in `ownWrites`: a late delivery is still this session's own (pruned after a minute).
        guard let write = ownWrite(number), let waiter = write.waiter else { return }
        write.waiter = nil
        waiter.resume(returning: false)
    }
}
