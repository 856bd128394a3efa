import Foundation
import Testing
@testable import UserListData
import UserListDomain

/// Presence messages as NOTIFY payloads: each under PostgreSQL's 8,000 bytes, a user held by
/// more people than fit in one sent in parts and put back together, a part whose start was lost
/// dropped rather than taken for the whole.
@Suite struct PresencePayloadTests {
    let user = UUID()

    @Test func everyMessageComesBackAsItWas() {
        var decoder = PresencePayload.Decoder()
        let messages: [PresenceMessage] = [
            .gone(daemon: "host:/run/userlistd.sock"), .ask(daemon: "b"),
            .holders(daemon: "b", user: user, [PresenceHolder(name: "alice", editing: true), PresenceHolder(name: "bob \"quoted\" ü", editing: false)]),
            .holders(daemon: "b", user: user, []),
        ]
        for message in messages {
            let payloads = PresencePayload.encode(message)
            #expect(payloads.count == 1)
            #expect(payloads.compactMap { decoder.decode($0) } == [message])
        }
    }

    @Test func aCrowdIsSentInPartsEachUnderTheLimitAndPutBackTogether() {
        let crowd = (0..<600).map { PresenceHolder(name: "someone-with-a-long-login-\($0)", editing: $0 % 7 == 0) }
        let message = PresenceMessage.holders(daemon: "host:/run/userlistd.sock", user: user, crowd)
        let payloads = PresencePayload.encode(message)
        #expect(payloads.count > 1)
        #expect(payloads.allSatisfy { $0.utf8.count <= PresencePayload.budget })
        var decoder = PresencePayload.Decoder()
        #expect(payloads.compactMap { decoder.decode($0) } == [message])

        // The first part lost (a reconnection): the rest is not taken for the whole.
        var late = PresencePayload.Decoder()
        #expect(payloads.dropFirst().compactMap { late.decode($0) } == [])
        #expect(late.decode("not json") == nil)
    }

    @Test func aNameNoLoginCouldHaveIsNotShown() {
        let long = String(repeating: "x", count: PresencePayload.Decoder.longestName + 1)
        let sent = PresenceMessage.holders(daemon: "b", user: user, [PresenceHolder(name: long, editing: true), PresenceHolder(name: "bob", editing: false)])
        var decoder = PresencePayload.Decoder()
        #expect(PresencePayload.encode(sent).compactMap { decoder.decode($0) }
                == [.holders(daemon: "b", user: user, [PresenceHolder(name: "bob", editing: false)])])
    }
}
