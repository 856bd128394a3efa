import Testing
@testable import UserListServer
import UserListWire

/// The introspection stage alone: which intents are the daemon's, and who may ask them.
@Suite struct DaemonQueriesTests {
    @Test func statusAndSessionsAreTheDaemonsAndTheRestGoToTheSession() {
        for action in ["status", "sessions"] {
            guard case .query(let query) = DaemonQueries.take(.init(id: 1, screen: "session", action: action)) else {
                Issue.record("\(action) went to the session"); continue
            }
            #expect(query.rawValue == action)
        }
        guard case .forSession(.success(.list(.refresh))) = DaemonQueries.take(.init(id: 2, screen: "list",
                                                                                       action: "refresh")),
              case .forSession(.failure(let error)) = DaemonQueries.take(.init(id: 3, screen: "nowhere", action: "x"))
        else { Issue.record("a session's intent was not decoded for it"); return }
        #expect(error.code == .unknownScreen, "a bad intent is the session's to answer, in order")
    }

    @Test func onlyAnAdminIsAnswered() {
        var asked: [DaemonQuery] = []
        let answer: (DaemonQuery) -> JSONValue = { asked.append($0); return .string("fine") }
        let refused = DaemonQueries.reply(to: .status, id: 5, fromAdmin: false, adminGroup: "wheel", answer: answer)
        #expect(refused == .reply(.failure(id: 5, code: .forbidden,
                                           message: "'status' is for root and members of the 'wheel' group.")))
        #expect(asked.isEmpty, "nothing about the daemon is gathered for someone who may not see it")
        let answered = DaemonQueries.reply(to: .sessions, id: 6, fromAdmin: true, adminGroup: "wheel", answer: answer)
        #expect(answered == .reply(.success(id: 6, result: .string("fine"))))
        #expect(asked == [.sessions])
    }
}
