import Foundation
import Testing
import UserListServer
import UserListWire

/// Bad input gets an error frame with a code from the spec; the connection closes only when the
/// stream is unusable; other clients carry on.
@Suite(.serialized, .timeLimit(.minutes(3))) struct BadInputTests {
    @Test func eachBadInputGetsItsErrorCodeAndOthersCarryOn() async throws {
        let daemon = try await DaemonHarness()
        let bystander = try daemon.client()
        _ = try await bystander.hello(key: "bystander")

        let client = try daemon.client()
        client.sendJSON(#"{"type":"intent","id":1,"screen":"list","action":"refresh"}"#)
        #expect(try await client.nextError().code == .notReady)
        client.sendJSON("{not json")
        #expect(try await client.nextError().code == .invalidJSON)
        client.sendJSON(#"{"type":"teleport"}"#)
        #expect(try await client.nextError().code == .unknownMessageType)
        client.sendJSON(#"{"type":"intent","screen":"list"}"#)
        #expect(try await client.nextError().code == .invalidMessage)
        client.sendRaw([0, 0, 0, 0])
        #expect(try await client.nextError().code == .malformedFrame)
        client.sendRaw([0, 0, 0, 2, 0xC3, 0x28])  // invalid UTF-8
        #expect([ErrorCode.invalidJSON, .malformedFrame].contains(try await client.nextError().code))

        _ = try await client.hello(key: "bad")
        try client.send(.hello(.init(protocolVersions: 1...1, client: .init(name: "t", build: "0"), sessionKey: "again")))
        #expect(try await client.nextError().code == .alreadyAttached)
        let unknownScreen = try await client.intent("settings", "open")
        #expect(unknownScreen.outcome == .failure(.init(code: .unknownScreen, message: unknownScreenMessage(unknownScreen))))
        let detailNotOpen = try await client.intent("detail", "save")
        guard case .failure(let detailError) = detailNotOpen.outcome else { Issue.record("save without a detail screen succeeded"); return }
        #expect(detailError.code == .unknownScreen)
        let unknownAction = try await client.intent("list", "explode")
        guard case .failure(let actionError) = unknownAction.outcome else { Issue.record("unknown action accepted"); return }
        #expect(actionError.code == .unknownAction)
        let badArgs = try await client.intent("list", "did_select_row", ["index": "three"])
        guard case .failure(let argsError) = badArgs.outcome else { Issue.record("bad args accepted"); return }
        #expect(argsError.code == .invalidArgs)

        // The bystander never noticed.
        #expect(try await bystander.intent("list", "refresh").outcome.isSuccess)
        await daemon.stop()
    }

    private func unknownScreenMessage(_ reply: ServerMessage.Reply) -> String {
        if case .failure(let body) = reply.outcome { return body.message }
        return ""
    }

    @Test func anOversizedFrameIsRefusedFromItsHeaderAndTheConnectionClosed() async throws {
        let daemon = try await DaemonHarness()
        let client = try daemon.client()
        client.sendRaw([0xFF, 0xFF, 0xFF, 0xFF])
        #expect(try await client.nextError().code == .frameTooLarge)
        #expect(await client.waitForClose())
        let other = try daemon.client()
        _ = try await other.hello(key: "still-serving")
        await daemon.stop()
    }

    @Test func anUnsupportedVersionIsAnErrorNamingBothSides() async throws {
        let daemon = try await DaemonHarness()
        let client = try daemon.client()
        try client.send(.hello(.init(protocolVersions: 7...9, client: .init(name: "future", build: "9"), sessionKey: "k")))
        let error = try await client.nextError()
        #expect(error.code == .unsupportedVersion)
        #expect(error.message.contains("7") && error.message.contains("1"))
        #expect(await client.waitForClose())
        await daemon.stop()
    }

    @Test func aFloodOfIntentsIsRateLimitedWithoutHarmingOthers() async throws {
        let daemon = try await DaemonHarness { $0.intentsPerSecond = 20 }
        let flooder = try daemon.client()
        _ = try await flooder.hello(key: "flood")
        for id in 1...200 {
            try flooder.send(.intent(.init(id: id, screen: "list", action: "dismiss_error")))
        }
        let limited = try await flooder.next(where: "rate_limited") { message -> Bool? in
            if case .reply(let reply) = message, case .failure(let e) = reply.outcome, e.code == .rateLimited { return true }
            return nil
        }
        #expect(limited)
        let calm = try daemon.client()
        _ = try await calm.hello(key: "calm")
        #expect(try await calm.intent("list", "dismiss_error").outcome.isSuccess)
        await daemon.stop()
    }

    @Test func sessionLimitsPerUIDAreEnforcedWithAClearError() async throws {
        let daemon = try await DaemonHarness { $0.maxSessionsPerUID = 2 }
        let a = try daemon.client(); _ = try await a.hello(key: "one")
        let b = try daemon.client(); _ = try await b.hello(key: "two")
        let c = try daemon.client()
        try c.send(.hello(.init(protocolVersions: 1...1, client: .init(name: "t", build: "0"), sessionKey: "three")))
        let error = try await c.nextError()
        #expect(error.code == .tooManySessions)
        await daemon.stop()
    }

    @Test func aClientThatNeverReadsIsCutOffFromPatchesAndGetsASnapshotLater() async throws {
        let daemon = try await DaemonHarness(sampleUsers: 300) { $0.clientBufferBytes = 8192 }
        let slow = try daemon.client()
        _ = try await slow.hello(key: "slow")
        let fast = try daemon.client()
        _ = try await fast.hello(key: "fast")
        try await fast.waitForState("rows") { _ in fast.rows.count == 50 }
        // The slow client's session loads pages it never reads.
        for index in stride(from: 49, to: 300, by: 50) {
            try slow.send(.intent(.init(id: 1000 + index, screen: "list", action: "did_display_row", args: ["index": .int(Int64(index))])))
            try await Task.sleep(for: .milliseconds(30))  // paces the requests; decides nothing
        }
        // Meanwhile the fast client works normally.
        #expect(try await fast.intent("list", "did_display_row", ["index": 49]).outcome.isSuccess)
        // When the slow client finally reads, its document converges on the truth.
        try await slow.waitForState("a consistent document") { _ in slow.rows.count >= 100 }
        await daemon.stop()
    }
}
