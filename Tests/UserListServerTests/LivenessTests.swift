import Foundation
import Testing
import UserListServer
import UserListWire

/// Idle clients are pinged; one that answers stays, one that stays silent is closed as idle.
@Suite(.serialized, .timeLimit(.minutes(3))) struct LivenessTests {
    @Test func aSilentClientIsPingedThenClosedAsIdle() async throws {
        let daemon = try await DaemonHarness { $0.pingIntervalSeconds = 0.5 }
        let silent = try daemon.client()
        _ = try await silent.hello(key: "silent")
        let nonce = try await silent.next(where: "ping") { message -> JSONValue? in
            if case .ping(let nonce) = message { nonce ?? .null } else { nil }
        }
        #expect(nonce != .null)
        let reason = try await silent.next(where: "goodbye") { message -> String? in
            if case .goodbye(let reason) = message { reason } else { nil }
        }
        #expect(reason == "idle_timeout")
        #expect(await silent.waitForClose())
        // Its session is kept for the retention period, like any detached one.
        let again = try daemon.client()
        #expect(try await again.hello(key: "silent").resumed)
        await daemon.stop()
    }

    @Test func aClientThatAnswersItsPingsStays() async throws {
        // 2 s: the client answers each ping well within the 4 s of silence that would close it,
        // even when a loaded machine delays this task by a second or two.
        let daemon = try await DaemonHarness { $0.pingIntervalSeconds = 2 }
        let client = try daemon.client()
        _ = try await client.hello(key: "alive")
        for _ in 0..<3 {
            let nonce = try await client.next(where: "ping") { message -> JSONValue? in
                if case .ping(let nonce) = message { nonce ?? .null } else { nil }
            }
            try client.send(.pong(nonce: nonce))
        }
        #expect(try await client.intent("list", "dismiss_error").outcome.isSuccess)
        #expect(!client.received.contains { if case .goodbye = $0 { true } else { false } })
        await daemon.stop()
    }
}
