import UserListWire

/// The client's copy of its session's state document, kept in step by snapshots and patches.
///
/// A pure state machine with no I/O: the socket reader feeds it every `ServerMessage` and carries
/// out the `Effect`s it returns, and tests drive it with messages built in memory.
///
/// Rules (Protocol/PROTOCOL.md, "State"): a snapshot starts an epoch at its `seq`; each patch must
/// carry the same epoch and the next `seq`. A gap, a foreign epoch or a patch that does not apply
/// means the copy can no longer be trusted: the mirror asks for `resync` once and ignores patches
/// until the next snapshot arrives. The last good document stays readable meanwhile.
public struct SessionMirror: Sendable {
    public enum Phase: Sendable, Equatable {
        /// No snapshot yet on this connection, or a resync is outstanding.
        case awaitingSnapshot
        /// The document matches the server's at `(epoch, seq)`.
        case inStep(epoch: Int, seq: Int)
    }

    /// What the caller must do after a message.
    public enum Effect: Sendable, Equatable {
        /// Send `resync` to the server.
        case sendResync(reason: String)
        case welcomed(ServerMessage.Welcome)
        case stateChanged(StateChange)
        case event(ServerMessage.Event)
        case reply(ServerMessage.Reply)
        case error(ServerMessage.ErrorMessage)
        case goodbye(reason: String)
        case pong
        /// The server pinged: answer `pong` with this nonce, or be closed as idle.
        case sendPong(nonce: JSONValue?)
    }

    public private(set) var phase: Phase = .awaitingSnapshot
    /// The last document known good; `nil` until the first snapshot.
    public private(set) var document: JSONValue?
    public private(set) var welcome: ServerMessage.Welcome?
    /// How many resyncs this mirror has asked for (diagnostics and tests).
    public private(set) var resyncCount = 0

    public init() {}

    /// A new connection: keep the document for display, but expect a fresh welcome and snapshot.
    public mutating func connectionRestarted() {
        phase = .awaitingSnapshot
        welcome = nil
    }

    public mutating func receive(_ message: ServerMessage) -> [Effect] {
        switch message {
        case .welcome(let welcome):
            self.welcome = welcome
            phase = .awaitingSnapshot
            return [.welcomed(welcome)]
        case .snapshot(let snapshot):
            document = snapshot.state
            phase = .inStep(epoch: snapshot.epoch, seq: snapshot.seq)
            return [.stateChanged(StateChange(document: snapshot.state, operations: nil))]
        case .patch(let patch):
            return apply(patch)
        case .event(let event):
            return [.event(event)]
        case .reply(let reply):
            return [.reply(reply)]
        case .error(let error):
            return [.error(error)]
        case .pong:
            return [.pong]
        case .ping(let nonce):
            return [.sendPong(nonce: nonce)]
        case .goodbye(let reason):
            return [.goodbye(reason: reason)]
        }
    }

    /// A frame arrived that could not be read; it may have been a patch, so ask for a snapshot.
    public mutating func unreadableMessage(_ reason: String) -> [Effect] {
        guard case .inStep = phase else { return [] }
        return outOfStep(reason)
    }

    private mutating func apply(_ patch: ServerMessage.Patch) -> [Effect] {
        guard case .inStep(let epoch, let seq) = phase, let current = document else {
            return []  // a resync is outstanding: the snapshot will carry these changes
        }
        guard patch.epoch == epoch else {
            return outOfStep("patch for epoch \(patch.epoch) while in epoch \(epoch)")
        }
        guard patch.seq == seq + 1 else {
            return outOfStep("patch seq \(patch.seq) after seq \(seq)")
        }
        do throws(PatchError) {
            let next = try JSONPatch.apply(patch.ops, to: current)
            document = next
            phase = .inStep(epoch: epoch, seq: patch.seq)
            return [.stateChanged(StateChange(document: next, operations: patch.ops))]
        } catch {
            return outOfStep("patch seq \(patch.seq) does not apply: \(error)")
        }
    }

    private mutating func outOfStep(_ reason: String) -> [Effect] {
        phase = .awaitingSnapshot
        resyncCount += 1
        return [.sendResync(reason: reason)]
    }
}

/// A new state document and how it came about.
public struct StateChange: Sendable, Equatable {
    public var document: JSONValue
    /// The operations that produced it, or `nil` for a whole snapshot.
    public var operations: [PatchOperation]?

    public init(document: JSONValue, operations: [PatchOperation]?) {
        self.document = document
        self.operations = operations
    }

    /// Ids of list rows whose fields were changed in place by this patch (not rows added or
    /// removed whole, which is what paging and searching do). A view highlights these.
    public var editedUserIDs: Set<String> {
        guard let operations else { return [] }
        var ids: Set<String> = []
        for operation in operations {
            let tokens = operation.path.tokens
            // /screens/<i>/state/users/<n>/<field>
            guard tokens.count >= 6, tokens[0] == "screens", tokens[2] == "state", tokens[3] == "users",
                  let screen = Int(tokens[1]), let row = Int(tokens[4]) else { continue }
            let users = document["screens"]?.arrayValue?[safe: screen]?["state"]?["users"]?.arrayValue
            if let id = users?[safe: row]?["id"]?.stringValue { ids.insert(id) }
        }
        return ids
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
