import Testing
import UserListClient
import UserListWire

/// The mirror's rules, driven with messages built in memory (no socket): patches in sequence,
/// gap / foreign epoch / failed apply → one resync, then patches ignored until the snapshot.
@Suite struct SessionMirrorTests {
    static let welcome = ServerMessage.Welcome(
        protocolVersion: 1, server: PeerInfo(name: "userlistd", build: "test"), sessionID: "s1",
        resumed: false, access: .readWrite, epoch: 7)

    static func document(_ names: [String]) -> JSONValue {
        let users: [JSONValue] = names.enumerated().map { index, name in
            ["id": .string("u\(index)"), "name": .string(name), "email": "x@example.com", "avatar_url": nil, "version": 1]
        }
        return ["screens": [["id": "list", "kind": "list", "state": ["users": .array(users), "loading": "none", "has_more": false]]]]
    }

    static func rename(row: Int, to name: String, epoch: Int = 7, seq: Int) -> ServerMessage {
        .patch(.init(epoch: epoch, seq: seq, ops: [.replace(path: JSONPointer(parsing: "/screens/0/state/users/\(row)/name")!, value: .string(name))]))
    }

    func started() -> SessionMirror {
        var mirror = SessionMirror()
        _ = mirror.receive(.welcome(Self.welcome))
        _ = mirror.receive(.snapshot(.init(epoch: 7, state: Self.document(["Ann", "Bob"]))))
        return mirror
    }

    @Test func snapshotThenPatchesInSequence() {
        var mirror = SessionMirror()
        #expect(mirror.receive(.welcome(Self.welcome)) == [.welcomed(Self.welcome)])
        #expect(mirror.phase == .awaitingSnapshot)
        let effects = mirror.receive(.snapshot(.init(epoch: 7, state: Self.document(["Ann", "Bob"]))))
        #expect(effects == [.stateChanged(StateChange(document: Self.document(["Ann", "Bob"]), operations: nil))])
        #expect(mirror.phase == .inStep(epoch: 7, seq: 0))

        let first = mirror.receive(Self.rename(row: 1, to: "Bea", seq: 1))
        #expect(mirror.document == Self.document(["Ann", "Bea"]))
        #expect(mirror.phase == .inStep(epoch: 7, seq: 1))
        guard case .stateChanged(let change) = first.first else { Issue.record("no state change"); return }
        #expect(change.editedUserIDs == ["u1"])
        _ = mirror.receive(Self.rename(row: 0, to: "Amy", seq: 2))
        #expect(mirror.document == Self.document(["Amy", "Bea"]))
        #expect(mirror.resyncCount == 0)
    }

    @Test func gapAsksForResyncOnceAndIgnoresPatchesUntilSnapshot() {
        var mirror = started()
        let effects = mirror.receive(Self.rename(row: 1, to: "Bea", seq: 2))  // seq 1 was lost
        #expect(effects.count == 1)
        guard case .sendResync = effects.first else { Issue.record("expected resync, got \(effects)"); return }
        #expect(mirror.phase == .awaitingSnapshot)
        #expect(mirror.document == Self.document(["Ann", "Bob"]), "the last good document stays readable")

        #expect(mirror.receive(Self.rename(row: 1, to: "Bea", seq: 3)).isEmpty, "no second resync")
        #expect(mirror.document == Self.document(["Ann", "Bob"]))

        _ = mirror.receive(.snapshot(.init(epoch: 8, state: Self.document(["Ann", "Bea", "Cid"]))))
        #expect(mirror.phase == .inStep(epoch: 8, seq: 0))
        _ = mirror.receive(Self.rename(row: 2, to: "Cyd", epoch: 8, seq: 1))
        #expect(mirror.document == Self.document(["Ann", "Bea", "Cyd"]))
        #expect(mirror.resyncCount == 1)
    }

    @Test func foreignEpochAsksForResync() {
        var mirror = started()
        let effects = mirror.receive(Self.rename(row: 0, to: "X", epoch: 6, seq: 1))
        guard case .sendResync = effects.first else { Issue.record("expected resync"); return }
        #expect(mirror.document == Self.document(["Ann", "Bob"]))
    }

    @Test func patchThatDoesNotApplyAsksForResyncAndKeepsDocument() {
        var mirror = started()
        let effects = mirror.receive(Self.rename(row: 5, to: "Nobody", seq: 1))
        guard case .sendResync(let reason) = effects.first else { Issue.record("expected resync"); return }
        #expect(reason.contains("does not apply"))
        #expect(mirror.document == Self.document(["Ann", "Bob"]))
    }

    @Test func patchBeforeAnySnapshotIsIgnored() {
        var mirror = SessionMirror()
        _ = mirror.receive(.welcome(Self.welcome))
        #expect(mirror.receive(Self.rename(row: 0, to: "X", seq: 1)).isEmpty)
        #expect(mirror.document == nil)
    }

    @Test func reconnectKeepsDocumentButWaitsForSnapshot() {
        var mirror = started()
        mirror.connectionRestarted()
        #expect(mirror.document == Self.document(["Ann", "Bob"]))
        #expect(mirror.receive(Self.rename(row: 0, to: "X", seq: 1)).isEmpty)
        #expect(mirror.welcome == nil)
    }

    @Test func repliesEventsAndErrorsPassThrough() {
        var mirror = started()
        let reply = ServerMessage.Reply.failure(id: 3, code: .validation, message: "Name is empty")
        #expect(mirror.receive(.reply(reply)) == [.reply(reply)])
        let event = ServerMessage.Event(screen: "session", name: "changed", payload: ["id": "u1", "kind": "removed"])
        #expect(mirror.receive(.event(event)) == [.event(event)])
        #expect(mirror.receive(.goodbye(reason: "shutting_down")) == [.goodbye(reason: "shutting_down")])
    }

    @Test func unreadableFrameWhileInStepAsksForResync() {
        var mirror = started()
        guard case .sendResync = mirror.unreadableMessage("garbage").first else { Issue.record("expected resync"); return }
        #expect(mirror.unreadableMessage("more garbage").isEmpty)
    }

    @Test func rowsAddedWholeAreNotHighlighted() {
        let change = StateChange(document: Self.document(["Ann", "Bob", "Cid"]),
                                 operations: [.add(path: "/screens/0/state/users/2", value: ["id": "u2"])])
        #expect(change.editedUserIDs.isEmpty)
    }

    @Test func backoffDoublesUpToTheCap() {
        let policy = ReconnectPolicy()
        #expect(policy.delay(beforeAttempt: 1) == .milliseconds(100))
        #expect(policy.delay(beforeAttempt: 2) == .milliseconds(200))
        #expect(policy.delay(beforeAttempt: 4) == .milliseconds(800))
        #expect(policy.delay(beforeAttempt: 10) == .seconds(2))
    }

    @Test func documentViewsReadTheStateShape() {
        let document = SessionDocument(Self.document(["Ann", "Bob"]))
        #expect(document.stack == ["list"])
        #expect(document.list?.users.map(\.name) == ["Ann", "Bob"])
        #expect(document.list?.loading == ListScreen.Loading.none)
        #expect(!document.showsDetail)
    }
}
