import Foundation
import Testing
import UserListData
import UserListPresentation
@testable import UserListServer
import UserListWire

/// The routing stage alone: where each message goes before and after hello, what counts against
/// the message windows, and when an intent may enter its session in place.
@Suite struct MessageRouterTests {
    static let hello = ClientMessage.hello(.init(protocolVersions: ProtocolVersion.supported,
                                                 client: PeerInfo(name: "test", build: "0"), sessionKey: "k"))
    static let intent = ClientMessage.intent(.init(id: 7, screen: "list", action: "refresh"))

    /// Routes `message`, counting how often the message windows were asked.
    static func route(_ message: ClientMessage, _ phase: ConnectionPhase,
                      admitted: Bool = true) -> (route: MessageRouter.Route, asked: Int) {
        var asked = 0
        let route = MessageRouter.route(message, phase: phase, admit: { asked += 1; return admitted })
        return (route, asked)
    }

    @Test func beforeHelloOnlyAHelloInAVersionBothSpeakGetsThrough() {
        for message in [ClientMessage.ping(nonce: nil), .resync, .bye] {
            guard case (.answer(.notReady, _, id: nil), 0) = Self.route(message, .awaitingHello) else {
                Issue.record("\(message.type) before hello is not answered not_ready"); continue
            }
        }
        guard case (.answer(.notReady, _, id: 7), 0) = Self.route(Self.intent, .awaitingHello) else {
            Issue.record("an intent before hello is not answered with its id"); return
        }
        guard case (.attach(let hello), 0) = Self.route(Self.hello, .awaitingHello) else {
            Issue.record("a hello does not start attaching"); return
        }
        #expect(hello.sessionKey == "k")
        let future = ClientMessage.hello(.init(protocolVersions: 60...61, client: PeerInfo(name: "t", build: "0"),
                                               sessionKey: "k"))
        guard case (.answer(.unsupportedVersion, _, id: nil), 0) = Self.route(future, .awaitingHello) else {
            Issue.record("a hello in no shared version is not refused"); return
        }
        guard case (.ignore, 0) = Self.route(.pong(nonce: nil), .closed) else { Issue.record("pong"); return }
    }

    @Test func afterHelloEverythingIsAnsweredInOrderAndByeAndPongAreNotCounted() {
        guard case (.queue(.bye), 0) = Self.route(.bye, .attaching) else { Issue.record("bye"); return }
        guard case (.ignore, 0) = Self.route(.pong(nonce: nil), .attaching) else { Issue.record("pong"); return }
        guard case (.queue(.duplicateHello), 1) = Self.route(Self.hello, .attaching) else {
            Issue.record("a second hello"); return
        }
        guard case (.queue(.ping(nonce: .int(3))), 1) = Self.route(.ping(nonce: .int(3)), .attaching) else {
            Issue.record("ping"); return
        }
        guard case (.queue(.resync), 1) = Self.route(.resync, .attaching) else { Issue.record("resync"); return }
        guard case (.intent(let intent), 1) = Self.route(Self.intent, .attaching) else {
            Issue.record("an admitted intent"); return
        }
        #expect(intent.id == 7)
    }

    @Test func pastTheWindowAnIntentStillGetsItsReply() {
        guard case (.rateLimited(intentID: 7), 1) = Self.route(Self.intent, .attaching, admitted: false),
              case (.rateLimited(intentID: nil), 1) = Self.route(.ping(nonce: nil), .attaching, admitted: false)
        else { Issue.record("not rate limited"); return }
        let text = "Too many messages: at most 5 per second per client."
        guard case .refused(id: 7, .rateLimited, text) = MessageRouter.refusal(intentID: 7, limit: 5),
              case .error(.rateLimited, text, id: nil) = MessageRouter.refusal(intentID: nil, limit: 5)
        else { Issue.record("the refusal does not say the limit"); return }
    }

    @Test func aBadMessageIsAnsweredAtOnceBeforeHelloAndInOrderAfter() throws {
        let error = try #require(throws: MessageError.self) {
            try ClientMessage(json: .object(["type": .string("nope")]))
        }
        let text = error.message
        guard case .answer(.unknownMessageType, text, id: nil) = MessageRouter.route(error, phase: .awaitingHello),
              case .queue(.error(.unknownMessageType, text, id: nil)) = MessageRouter.route(error, phase: .attaching)
        else { Issue.record("a bad message is routed wrongly"); return }
    }

    @Test func anIntentEntersInPlaceOnlyWhenItsSessionIsOnThisLoopAndNothingIsQueued() throws {
        let directory = NSTemporaryDirectory() + "userlistd-router-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let repository = try SQLiteUserRepository(path: directory + "/users.sqlite3")
        let feed = try SQLiteChangeFeed(observing: repository)
        let loop = TestLoops.first, other = TestLoops.group.loops[1]
        let session = Session(key: SessionKey(uid: 1000, clientKey: "in-place"), loop: loop, canWrite: { true },
                              useCases: UserUseCases(repository: repository),
                              changes: ChangeBroadcaster(feed: feed, loops: TestLoops.group.loops),
                              logger: Logger(sink: .memory, level: .error))
        let inPlace = MessageRouter.sessionTakingIntentsInPlace(.attached(session), inboxIdle: true, loop: loop)
        #expect(inPlace === session)
        #expect(MessageRouter.sessionTakingIntentsInPlace(.attached(session), inboxIdle: false, loop: loop) == nil,
                "a backlog: the intent queues behind it")
        #expect(MessageRouter.sessionTakingIntentsInPlace(.attached(session), inboxIdle: true, loop: other) == nil,
                "another loop's session is entered from the ordered task")
        #expect(MessageRouter.sessionTakingIntentsInPlace(.attaching, inboxIdle: true, loop: loop) == nil)
    }
}
