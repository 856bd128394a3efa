import Foundation
import Testing
import UserListDomain
import UserListServer
import UserListWire

/// A session's own write, recognised by its change-log position (`CommitReceipt`): its reply
/// comes after the patch that shows it, the writer gets no `changed` event for it (§4.2: that
/// event reports someone else's change), and every other session gets exactly one.
@Suite(.timeLimit(.minutes(3))) struct OwnWriteTests {
    typealias Store = LoopDeliveryTests.Store
    typealias Client = LoopDeliveryTests.MirroringClient

    private func send(_ session: Session, _ client: Client, id: Int, _ screen: String, _ action: String,
                      _ args: [String: JSONValue] = [:]) async throws -> ServerMessage.Reply {
        await session.handle(.init(id: id, screen: screen, action: action, args: args), from: client)
        #expect(await client.sees { client.reply(id) != nil }, "no reply to \(action)")
        return try #require(client.reply(id))
    }

    private func firstName(_ client: Client) -> String? {
        client.document?["screens"]?.arrayValue?.first?["state"]?["users"]?.arrayValue?.first?["name"]?.stringValue
    }

    @Test(arguments: [false, true])
    func theWritersReplyFollowsItsPatchAndOnlyOthersHearOfIt(otherLoop: Bool) async throws {
        let store = try await Store(users: 30)
        defer { store.remove() }
        let loops = TestLoops.group.loops
        let writer = store.session("writer", on: loops[0])
        let watcher = store.session("watcher", on: loops[otherLoop ? 1 % loops.count : 0])
        let w = Client(loop: writer.loop), o = Client(loop: watcher.loop)
        await writer.attach(w)
        await watcher.attach(o)
        #expect(await w.sees { w.rows == 30 })
        #expect(await o.sees { o.rows == 30 })
        let first = try #require(store.users.min { $0.name.lowercased() < $1.name.lowercased() })

        for round in 1...3 {
            let name = "Aaaa Own \(round)"
            let reply = try await send(writer, w, id: round, "session", "rename_user",
                                       ["id": .string(first.id.uuidString.lowercased()), "name": .string(name)])
            guard case .success = reply.outcome else {
                Issue.record("rename \(round) failed: \(reply)")
                return
            }
            // Read when the reply was: the patch that shows the write came before it.
            #expect(firstName(w) == name, "round \(round): the writer's copy shows its rename by the time of the reply")
            #expect(await o.sees { o.changedEvents == round && self.firstName(o) == name },
                    "round \(round): the other session hears of it once")
        }
        #expect(w.changedEvents == 0, "the writer is not told of its own writes")
        #expect(o.changedEvents == 3)
    }
}
