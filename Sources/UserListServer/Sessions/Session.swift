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
    package let readOnly: Bool
    package nonisolated let activity = Mutex(Activity())

    private let useCases: UserUseCases
    private let changes: ChangeBroadcaster
    private let logger: Logger
    private var navigator: Navigator
    private var restored: NavigationState?
    private var started = false
    /// The state every attached client has (or will have once its pending frames are read).
    /// Kept as the typed state, not its JSON: it shares storage with the screens' own state,
    /// and the next patch is computed from it by `StateDiff`.
    private var sent: NavigationState?
    private var clients: [ObjectIdentifier: Attached] = [:]
    private var flushScheduled = false
    private var applyingChange = false
    /// The broadcaster's encoded `changed` event for the change being applied.
    private var changedEventFrame: [UInt8]?
    /// Encoded event frames waiting for the next flush.
    private var pendingEvents: [[UInt8]] = []
    private var feedTask: Task<Void, Never>?
    private let frameEncoder = FrameEncoder(maximumFrameSize: FrameLimits.serverToClient)

    package init(key: SessionKey, id: String = UUID().uuidString.lowercased(), readOnly: Bool,
                 useCases: UserUseCases, changes: ChangeBroadcaster, logger: Logger,
                 restoring saved: NavigationState? = nil) {
        self.key = key
        self.id = id
        self.readOnly = readOnly
        self.useCases = useCases
        self.changes = changes
        self.logger = logger
        self.navigator = Navigator(useCases: useCases)
        self.restored = saved
    }

    deinit { feedTask?.cancel() }

    /// The state to save across a daemon restart.
    package var savedState: NavigationState { navigator.state }


    // MARK: attach and detach

    /// Adds a client and sends it a snapshot in `epoch` (the one its welcome named). The first
    /// attach starts the screens.
    package func attach(_ client: any SessionClient, epoch: Int = EpochSource.next()) {
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
    }

    package func detach(_ client: any SessionClient) {
        guard clients.removeValue(forKey: ObjectIdentifier(client)) != nil else { return }
        activity.withLock {
            $0.clients = clients.count
            if clients.isEmpty { $0.detachedAt = .now }
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
        client.send(.snapshot(.init(epoch: attached.epoch, seq: 0, state: StateDocument.make(sent ?? navigator.state))), droppable: true)
    }

    /// Marks a client whose patches were dropped: no more patches until its snapshot.
    package func clientOverflowed(_ client: any SessionClient) {
        clients[ObjectIdentifier(client)]?.awaitingSnapshot = true
    }

    /// Tells every client the daemon is going away.
    package func sayGoodbye(reason: String) {
        for attached in clients.values {
            attached.client.send(.goodbye(reason: reason), droppable: false)
        }
    }

    /// Waits for saves in flight (shutdown: finish what was acknowledged as started).
    package func finishInFlightWork() async {
        for case .detail(let detail) in navigator.screens {
            _ = await detail.waitForSave()
        }
    }

    // MARK: state streaming

    private func startIfNeeded() {
        guard !started else { return }
        started = true
        if let saved = restored {
            navigator = Navigator(restoring: saved, useCases: useCases)
            restored = nil
        } else {
            navigator.list.onAppear()
        }
        navigator.onStateChange = { [unowned self] in self.stateChanged() }
        navigator.onEvent = { [unowned self] event in self.forward(event) }
        let deliveries = changes.subscribe()
        feedTask = Task { [weak self] in
            for await delivery in deliveries {
                guard let self else { return }
                await self.apply(delivery)
            }
        }
        sent = navigator.state
    }

    /// A change committed anywhere: every screen follows it, and each client gets one patch and
    /// the `changed` event together, in one write.
    private func apply(_ delivery: ChangeBroadcaster.Delivery) {
        applyingChange = true
        changedEventFrame = delivery.eventFrame
        navigator.apply(delivery.change)
        changedEventFrame = nil
        applyingChange = false
        flush()
    }

    /// Coalesces the several changes one completion can make into one patch.
    private func stateChanged() {
        guard !applyingChange, !flushScheduled else { return }
        flushScheduled = true
        Task { self.flushScheduledChanges() }
    }

    private func flushScheduledChanges() {
        flushScheduled = false
        flush()
    }

    /// Diffs and sends one patch to every client that is in step, followed by the events that
    /// describe the new state.
    package func flush() {
        let current = navigator.state
        let ops = sent.map { StateDiff.ops(from: $0, to: current) } ?? []
        sent = current
        let events = pendingEvents
        pendingEvents.removeAll()
        guard !ops.isEmpty || !events.isEmpty else { return }
        if !ops.isEmpty { activity.withLock { $0.screens = current.screens.count } }
        let eventFrames = events
        let serializedOps = ops.isEmpty ? [] : FrameEncoder.serializedOperations(ops)
        for (id, var attached) in clients {
            var frames: [(bytes: [UInt8], droppable: Bool)] = []
            if !ops.isEmpty && !attached.awaitingSnapshot {
                attached.seq += 1
                clients[id] = attached
                if let patch = try? frameEncoder.encodePatch(epoch: attached.epoch, seq: attached.seq, serializedOperations: serializedOps) {
                    frames.append((patch, true))
                }
            }
            for frame in eventFrames { frames.append((frame, false)) }  // events are never dropped (§7)
            if !frames.isEmpty { attached.client.sendFrames(frames) }
        }
    }

    private func forward(_ event: NavigatorEvent) {
        let frame: [UInt8]?
        switch event {
        case .list(.userSelected(let id)):
            frame = try? frameEncoder.encode(ServerMessage.event(.init(
                screen: "list", name: "user_selected", payload: ["id": .string(id.uuidString.lowercased())])))
        case .detail(.didSave(let user)):
            frame = try? frameEncoder.encode(ServerMessage.event(.init(
                screen: "detail", name: "did_save", payload: ["user": StateDocument.user(user)])))
        case .changed(let change):
            // Encoded once for all sessions by the broadcaster, when the change came from it.
            frame = changedEventFrame ?? (try? frameEncoder.encode(ServerMessage.event(ChangeBroadcaster.event(for: change))))
        }
        // Sent with the next patch, after it: the event describes the state the patch brings.
        if let frame { pendingEvents.append(frame) }
        stateChanged()
    }

    // MARK: intents

    /// Performs one intent and replies to `client` when its outcome is known (loads and saves
    /// reply once they finish; the state patches flow meanwhile).
    package func handle(_ intent: ClientMessage.Intent, from client: any SessionClient) {
        activity.withLock { $0.lastActive = .now }
        let outcome = dispatch(intent)
        flush()
        switch outcome {
        case .done(let result):
            client.send(.reply(.success(id: intent.id, result: result)), droppable: false)
        case .failed(let code, let message):
            client.send(.reply(.failure(id: intent.id, code: code, message: message)), droppable: false)
        case .pending(let work):
            Task {
                let finished = await work(self)
                self.flush()
                switch finished {
                case .done(let result):
                    client.send(.reply(.success(id: intent.id, result: result)), droppable: false)
                case .failed(let code, let message):
                    client.send(.reply(.failure(id: intent.id, code: code, message: message)), droppable: false)
                case .pending:
                    preconditionFailure("pending work must finish")
                }
            }
        }
    }

    enum Outcome {
        case done(JSONValue?)
        case failed(ErrorCode, String)
        /// Runs on this actor after the intent's synchronous part.
        case pending((isolated Session) async -> Outcome)
    }

    private func dispatch(_ intent: ClientMessage.Intent) -> Outcome {
        let args = IntentArguments(intent.args ?? [:])
        do throws(IntentError) {
            switch intent.screen {
            case "list": return try listIntent(intent.action, args)
            case "detail":
                guard let detail = navigator.topDetail else {
                    throw IntentError(.unknownScreen, "No detail screen is open; open a user first.")
                }
                return try detailIntent(intent.action, args, detail)
            case "session": return try sessionIntent(intent.action, args)
            default:
                throw IntentError(.unknownScreen, "There is no screen '\(intent.screen)' on this session's stack; screens are list, detail (when open) and session.")
            }
        } catch {
            return .failed(error.code, error.message)
        }
    }

    private func requireWrite(_ action: String) throws(IntentError) {
        guard !readOnly else {
            throw IntentError(.readOnly, "This session is read-only: '\(action)' needs root or membership of the admin group.")
        }
    }

    private func listIntent(_ action: String, _ args: IntentArguments) throws(IntentError) -> Outcome {
        let list = navigator.list
        switch action {
        case "on_appear":
            list.onAppear()
            return .pending { session in await session.navigator.list.waitForLoad(); return session.listOutcome() }
        case "refresh":
            list.refresh()
            return .pending { session in await session.navigator.list.waitForLoad(); return session.listOutcome() }
        case "search":
            list.search(try args.string("text"))
            return .pending { session in await session.navigator.list.waitForLoad(); return session.listOutcome() }
        case "did_display_row":
            list.didDisplayRow(at: try args.int("index"))
            return .pending { session in await session.navigator.list.waitForLoad(); return session.listOutcome() }
        case "did_select_row":
            let index = try args.int("index")
            guard list.hasRow(at: index) else {
                throw IntentError(.invalidArgs, "Row \(index) is not on screen; the list has \(list.state.users.count) rows.")
            }
            navigator.selectRow(at: index)
            return .done(nil)
        case "dismiss_error":
            list.dismissError()
            return .done(nil)
        case "add_user":
            try requireWrite(action)
            let new = NewUser(name: try args.string("name"), email: try args.string("email"),
                              avatarURL: try args.optionalString("avatar_url"))
            return .pending { session in
                switch await session.navigator.list.addUser(new) {
                case .success(let user): .done(StateDocument.user(user))
                case .failure(let error): Self.failure(error)
                }
            }
        case "remove_user":
            try requireWrite(action)
            let id = try args.uuid("id")
            return .pending { session in
                switch await session.navigator.list.removeUser(id: id) {
                case .success: .done(nil)
                case .failure(let error): Self.failure(error)
                }
            }
        default:
            throw IntentError(.unknownAction, "The list screen has no action '\(action)'.")
        }
    }

    private func listOutcome() -> Outcome {
        if let message = navigator.list.state.errorMessage { return .failed(.unavailable, message) }
        return .done(nil)
    }

    private func detailIntent(_ action: String, _ args: IntentArguments, _ detail: UserDetailViewModel) throws(IntentError) -> Outcome {
        switch action {
        case "set_draft_name":
            detail.setDraftName(try args.string("name"))
            return .done(nil)
        case "save":
            try requireWrite(action)
            if detail.state.user == nil {
                let screen = ObjectIdentifier(detail)
                return .pending { session in
                    guard let detail = session.detailScreen(screen) else { return .failed(.internal, "The screen closed.") }
                    await detail.waitForLoad()
                    return session.save(detail)
                }
            }
            return save(detail)
        case "dismiss_error":
            detail.dismissError()
            return .done(nil)
        case "back":
            navigator.back()
            return .done(nil)
        case "on_appear":
            detail.onAppear()
            return .pending { session in
                await session.navigator.topDetail?.waitForLoad()
                return .done(nil)
            }
        default:
            throw IntentError(.unknownAction, "The detail screen has no action '\(action)'.")
        }
    }

    private func save(_ detail: UserDetailViewModel) -> Outcome {
        let state = detail.state
        guard state.user != nil else {
            return .failed(.notFound, state.errorMessage ?? "The user could not be loaded.")
        }
        guard state.canSave else {
            if !state.isDirty { return .done(state.user.map(StateDocument.user)) }  // nothing to save
            do throws(UserError) {
                _ = try UserValidation.validName(state.draftName)
            } catch {
                return Self.failure(error)
            }
            return .failed(.validation, "The draft cannot be saved now.")
        }
        detail.save()
        let screen = ObjectIdentifier(detail)
        return .pending { session in
            guard let detail = session.detailScreen(screen) else { return .failed(.internal, "The screen closed during the save.") }
            switch await detail.waitForSave() {
            case .success(let user)?: return .done(StateDocument.user(user))
            case .failure(let error)?: return Self.failure(error)
            case nil: return .failed(.internal, "The save did not run.")
            }
        }
    }

    private func sessionIntent(_ action: String, _ args: IntentArguments) throws(IntentError) -> Outcome {
        switch action {
        case "open_user":
            let id = try args.uuid("id")
            navigator.openUser(id)
            return .pending { session in
                guard let detail = session.navigator.topDetail else { return .done(nil) }
                await detail.waitForLoad()
                if let message = detail.state.errorMessage { return .failed(.notFound, message) }
                return .done(detail.state.user.map(StateDocument.user))
            }
        case "back":
            navigator.back()
            return .done(nil)
        case "import_users":
            try requireWrite(action)
            let users = try args.users("users")
            let useCases = useCases
            return .pending { session in
                do throws(UserError) {
                    let count = try await useCases.importUsers.execute(users)
                    return .done(["imported": .int(Int64(count))])
                } catch {
                    return Self.failure(error)
                }
            }
        default:
            throw IntentError(.unknownAction, "The session has no action '\(action)'.")
        }
    }

    /// The detail screen with this identity, if it is still on the stack.
    private func detailScreen(_ id: ObjectIdentifier) -> UserDetailViewModel? {
        for case .detail(let detail) in navigator.screens where ObjectIdentifier(detail) == id { return detail }
        return nil
    }

    static func failure(_ error: UserError) -> Outcome {
        switch error {
        case .notFound: .failed(.notFound, error.message)
        case .conflict, .duplicateEmail: .failed(.conflict, error.message)
        case .validation: .failed(.validation, error.message)
        case .unavailable: .failed(.unavailable, error.message)
        case .forbidden: .failed(.forbidden, error.message)
        }
    }
}
