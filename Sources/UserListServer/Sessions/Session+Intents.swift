import Foundation
import UserListDomain
import UserListPresentation
import UserListWire
import ThreadLocks

/// The intents a session performs: checked, run on its screens, answered once.
extension Session {
    /// Performs one intent and replies to `client` when its outcome is known. Every patch the
    /// intent causes is sent before its reply (loads and saves reply once they finish; the
    /// state patches flow meanwhile).
    package func handle(_ message: ClientMessage.Intent, from client: any SessionClient) {
        handle(message, decoded: Result { () throws(IntentError) in try Intent(message) }, from: client)
    }

    /// `decoded`: `message` as the connection's handler decoded it (once, at the edge).
    func handle(_ message: ClientMessage.Intent, decoded: Result<Intent, IntentError>, from client: any SessionClient) {
        // After goodbye nothing new starts, and it gets no reply: its client was told the
        // daemon is going away (its connection closes), and a save begun now could reach the
        // store after the shutdown closed it. Saves begun before are finished first.
        guard !mode.isFinished else { return }
        activity.withLock { $0.lastActive = .now }
        let outcome: Outcome
        do throws(IntentError) {
            let intent = try decoded.get()
            if intent.writes && !canWrite() {
                throw IntentError(.readOnly, AccessPolicy.refusal(action: message.action, uid: key.uid))
            }
            navigator.isReadOnly = readOnly  // a reload may have changed the admin group
            let before = mode.begin(.handlingIntent)
            defer { mode.end(returningTo: before) }
            outcome = try perform(intent)
        } catch {
            outcome = .failed(error.code, error.message)
        }
        flush()
        switch outcome {
        case .done(let result):
            reply(.success(id: message.id, result: result), to: client)
        case .failed(let code, let text):
            reply(.failure(id: message.id, code: code, message: text), to: client)
        case .pending(let work):
            finishLater(work, id: message.id, to: client) { .message(.success(id: message.id, result: $0)) }
        case .pendingEncoded(let work):
            finishLater(work, id: message.id, to: client) { .encoded(id: message.id, result: $0) }
        }
    }

    /// Runs an intent's asynchronous part on this actor, then replies after a flush, so the
    /// reply follows the state the work left.
    private func finishLater<Value: Sendable>(_ work: @escaping (isolated Session) async -> Result<Value, IntentError>,
                                               id: Int, to client: any SessionClient,
                                               success: @escaping @Sendable (Value) -> SessionReply) {
        Task {
            let finished = await work(self)
            self.flush()
            switch finished {
            case .success(let result):
                self.reply(success(result), to: client)
            case .failure(let error):
                self.reply(.failure(id: id, code: error.code, message: error.message, kept: error.kept), to: client)
            }
        }
    }

    private func reply(_ reply: ServerMessage.Reply, to client: any SessionClient) {
        self.reply(.message(reply), to: client)
    }

    /// Sends `reply`, or holds it (and every reply after it, in order) until the list the
    /// session started loading when it started is on its screens (usually long since): an
    /// intent sent right after the welcome, whose own read can finish first, would otherwise be
    /// answered while the list still shows "loading", and two runs of the same client would see
    /// two different documents at the reply. See `firstLoadFinished`.
    private func reply(_ reply: SessionReply, to client: any SessionClient) {
        guard !mode.hold((client, reply)) else { return }
        reply.send(to: client)
    }

    /// The first load is on the screens: its patch, then the replies held for it, in order.
    func firstLoadFinished() {
        let held = mode.firstPageLoaded()
        flush()
        for (client, reply) in held { reply.send(to: client) }
    }

    enum Outcome {
        case done(JSONValue?)
        case failed(ErrorCode, String)
        /// Runs on this actor after the intent's synchronous part.
        case pending((isolated Session) async -> Result<JSONValue?, IntentError>)
        /// As `pending`, with a result already serialized as JSON (`export_page`).
        case pendingEncoded((isolated Session) async -> Result<[UInt8], IntentError>)
    }

    func perform(_ intent: Intent) throws(IntentError) -> Outcome {
        switch intent {
        case .list(let list): return try perform(list)
        case .detail(let detail):
            guard let screen = navigator.topDetail else {
                throw IntentError(.unknownScreen, "No detail screen is open; open a user first.")
            }
            return perform(detail, on: screen)
        case .session(let session): return perform(session)
        case .history(let history): return try perform(history)
        case .daemon(let query):
            throw IntentError(.unknownAction, "'\(query.rawValue)' is answered by the daemon, not by a session.")
        }
    }

    func perform(_ intent: ListIntent) throws(IntentError) -> Outcome {
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
                await session.write { session in
                    let result = await session.navigator.list.addUser(new)
                    return result.map { user in (StateDocument.user(user), .added(user)) }
                }
            }
        case .removeUser(let id):
            return .pending { session in
                await session.write { session in
                    await session.navigator.list.removeUser(id: id).map { (nil, .removed(id: id)) }
                }
            }
        }
    }

    func perform(_ intent: DetailIntent, on detail: UserDetailViewModel) -> Outcome {
        switch intent {
        case .setDraft(let field, let text):
            detail.setDraft(field, text)
            return .done(nil)
        case .keepMine(let field):
            guard detail.keepMine(field) else { return Self.noConflict(field) }
            return .done(nil)
        case .takeTheirs(let field):
            guard detail.takeTheirs(field) else { return Self.noConflict(field) }
            return .done(nil)
        case .recreate:
            guard detail.recreate() else {
                return .failed(.invalidArgs, "This user was not removed; there is nothing to create again.")
            }
            return .done(nil)
        case .save:
            let before = detail.state.user
            let receipt = beginWrite()
            // `withValue`'s closure is not isolated to the session, though it runs on it, in
            // place: it enters the session again to start the save (on `detail`, the top screen).
            let startSave = { self.assumeIsolated { $0.navigator.topDetail?.save() } }
            guard let saving = CommitReceipt.$current.withValue(receipt, operation: startSave) else {
                endWrite(receipt)
                return .failed(.unknownScreen, "No detail screen is open; open a user first.")
            }
            return .pending { session in
                let result = await saving.value
                if case .success(let saved) = result, saved != before {
                    // The screens show it already; waiting for the feed's (silent) copy means
                    // that once the reply is read, no later frame is about this save.
                    await session.settle(receipt, orApply: nil)
                }
                session.endWrite(receipt)
                return result.map(StateDocument.user).mapError(IntentError.init)
            }
        case .dismissError:
            detail.dismissError()
            return .done(nil)
        case .back:
            navigator.back()
            return .done(nil)
        case .openHistory:
            return openHistory()
        case .onAppear:
            let load = detail.onAppear()
            return .pending { _ in await load.value.map { _ in nil }.mapError(IntentError.init) }
        }
    }

    func perform(_ intent: SessionIntent) -> Outcome {
        switch intent {
        case .openUser(let id):
            return .pending { session in
                await session.navigator.openUser(id).map(StateDocument.user).mapError(IntentError.init)
            }
        case .back:
            navigator.back()
            return .done(nil)
        case .offerDraft(let id, let fields, let baseVersion):
            return .pending { session in
                await session.takeOfferedDraft(id: id, fields: fields, baseVersion: baseVersion)
            }
        case .exportPage(let request):
            return exportPage(request)
        case .findUsers(let request):
            return findUsers(request)
        case .history(let request):
            return history(request)
        case .revert(let entry, let skippingChanged):
            return revertCommand(entry, skippingChanged: skippingChanged)
        case .stagedImport(let intent):
            return perform(intent)
        case .importUsers(let users):
            return importUsers(users)
        case .setUser(let id, let edit, let expectedVersion):
            return setUser(id, edit, expectedVersion: expectedVersion)
        case .openNewUser:
            navigator.openNewUser()
            guard let detail = navigator.topDetail else { return .done(nil) }
            return .done(["id": .string(UUIDText.lowercase(detail.userID))])
        case .addUser(let new):
            return addUser(new)
        case .removeUser(let id):
            return removeUser(id)
        }
    }

    /// An outcome that waits for a list load.
    static func outcome(of load: UserListViewModel.Load) -> Outcome {
        .pending { _ in await load.value.map { nil }.mapError(IntentError.init) }
    }

    /// A one-shot write with a version check that lost: the conflict names who saved what since
    /// (`ConflictStory`), from the history, when the store keeps one.
    func tellingWhoSavedFirst(_ result: Result<JSONValue?, IntentError>, id: UUID, expectedVersion: Int?,
                              lead: String? = nil) async -> Result<JSONValue?, IntentError> {
        guard case .failure(let error) = result, error.code == .conflict, let expectedVersion,
              let history = useCases.history,
              let page = try? await history.user(id, limit: 50),
              let story = ConflictStory.since(expectedVersion, in: page.entries)
        else { return result }
        let lead = lead ?? "Version \(expectedVersion) is no longer current:"
        return .failure(IntentError(.conflict, "\(lead) \(story)"))
    }

    static func noConflict(_ field: UserField) -> Outcome {
        .failed(.invalidArgs, "There is no conflict on the \(field.label) to settle.")
    }

    static func noRow(_ index: Int, rows: Int) -> IntentError {
        IntentError(.invalidArgs, "Row \(index) is not on screen; the list has \(rows) rows (0 to \(rows - 1)).")
    }
}
