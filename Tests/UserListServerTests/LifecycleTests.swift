import Foundation
import Glibc
import Synchronization
import Testing
import UserListTestSupport
import UserListServer
import UserListWire

/// What a daemon that runs for months needs: closed connections free everything, a trickled
/// frame meets its deadline, one uid's unfinished frames are bounded, and a uid never locks
/// itself out of its own sessions.
@Suite struct LifecycleTests {
    /// A frame header announcing `length` bytes and the first `sent` of them.
    static func partialFrame(announcing length: Int, sending sent: Int) -> [UInt8] {
        withUnsafeBytes(of: UInt32(length).bigEndian) { Array($0) } + [UInt8](repeating: UInt8(ascii: "{"), count: sent)
    }

    /// The running daemon's registry (in place before the harness's start returns: the daemon
    /// logs "ready" after building it).
    static func registry(_ harness: DaemonHarness) async throws -> SessionRegistry {
        try #require(harness.daemon?.registry)
    }

    static func rawConnect(_ path: String) throws -> Int32 { try UnixSocket.connect(to: path) }

    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return }
            offset += written
        }
    }

    @Test(.timeLimit(.minutes(5)))
    func closedConnectionsReleaseEverythingTheyHeld() async throws {
        let daemon = try await DaemonHarness()
        let live = try #require(daemon.daemon?.liveObjects)
        let registry = try await Self.registry(daemon)
        // Partial frames of 100 KB, then gone before any hello.
        for _ in 0..<200 {
            let fd = try Self.rawConnect(daemon.socketPath)
            Self.sendAll(fd, Self.partialFrame(announcing: 200_000, sending: 100_000))
            close(fd)
        }
        // Whole sessions: hello, an intent, bye.
        for index in 0..<30 {
            let client = try daemon.client()
            _ = try await client.hello(key: "churn-\(index)")
            _ = try await client.intent("list", "refresh")
            try client.send(.bye)
            #expect(await client.waitForClose(timeout: 120))
        }
        // Each release beats: awaited, not polled.
        let released = Pulse()
        live.onChange { released.beat() }
        let freed = await released.until(timeout: .seconds(120)) {
            live.connections.load(ordering: .relaxed) == 0 && live.handlers.load(ordering: .relaxed) == 0
        }
        #expect(freed, "connections alive: \(live.connections.load(ordering: .relaxed)), handlers: \(live.handlers.load(ordering: .relaxed))")
        #expect(registry.partialBytes(uid: getuid()) == 0)
        #expect(registry.connectionCount == 0)
        await daemon.stop()
    }

    @Test(.timeLimit(.minutes(5)))
    func aTrickledFrameIsClosedAtItsDeadline() async throws {
        let daemon = try await DaemonHarness { $0.frameTimeoutSeconds = 1 }
        let bystander = try daemon.client()
        _ = try await bystander.hello(key: "bystander")
        let trickler = try daemon.client()
        trickler.sendRaw(Self.partialFrame(announcing: 100, sending: 10))
        // One byte at a time keeps the connection busy but never finishes the frame; the pace
        // only keeps bytes coming, the deadline decides.
        let stop = Flag()
        let fd = trickler.fd
        let pacer = Task.detached {
            for _ in 0..<80 where !stop.isSet {
                _ = withUnsafeBytes(of: UInt8(ascii: " ")) { Glibc.send(fd, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        let error = try await trickler.nextError(timeout: 60)
        stop.set()
        await pacer.value
        #expect(error.code == .frameTimeout)
        #expect(error.fatal)
        #expect(await trickler.waitForClose(timeout: 120))
        // Nobody else noticed.
        #expect(try await bystander.intent("list", "refresh").outcome.isSuccess)
        await daemon.stop()
    }

    @Test(.timeLimit(.minutes(5)))
    func oneUIDsUnfinishedFramesAreBounded() async throws {
        let daemon = try await DaemonHarness { $0.maxPartialBytesPerUID = 64 * 1024 }
        let registry = try await Self.registry(daemon)
        let first = try daemon.client()
        first.sendRaw(Self.partialFrame(announcing: 500_000, sending: 40_000))
        #expect(await eventually(timeout: .seconds(120)) { registry.partialBytes(uid: getuid()) >= 40_000 })
        let second = try daemon.client()
        second.sendRaw(Self.partialFrame(announcing: 500_000, sending: 40_000))
        let error = try await second.nextError(timeout: 120)
        #expect(error.code == .inputLimit)
        #expect(await second.waitForClose(timeout: 120))
        #expect(await eventually(timeout: .seconds(120)) { registry.partialBytes(uid: getuid()) <= 64 * 1024 })
        // The uid can still talk: a client with whole frames gets its session.
        let third = try daemon.client()
        #expect(try await third.hello(key: "after-the-limit").access == .readWrite)
        await daemon.stop()
    }

    @Test(.timeLimit(.minutes(5)))
    func aUIDAtItsSessionLimitEndsItsLeastRecentlyUsedDetachedSession() async throws {
        let daemon = try await DaemonHarness { $0.maxSessionsPerUID = 3 }
        let registry = try await Self.registry(daemon)
        for key in ["one", "two", "three"] {
            let client = try daemon.client()
            _ = try await client.hello(key: key)
            _ = try await client.intent("list", "refresh")  // "one" is the least recently used
        }
        // Those clients are gone (deinit closed them): three detached sessions.
        #expect(await eventually(timeout: .seconds(120)) { registry.connectionCount == 0 })
        let fourth = try daemon.client()
        let welcome = try await fourth.hello(key: "four")
        #expect(!welcome.resumed)
        #expect(registry.sessionCount == 3)
        let three = try daemon.client()
        #expect(try await three.hello(key: "three").resumed, "a recently used session is kept")
        let two = try daemon.client()
        #expect(try await two.hello(key: "two").resumed)
        // Now every session has a client: a new key is refused, with the reason.
        let fifth = try daemon.client()
        try fifth.send(.hello(.init(protocolVersions: 1...1, client: .init(name: "test", build: "0"), sessionKey: "five")))
        let refused = try await fifth.nextError(timeout: 120)
        #expect(refused.code == .tooManySessions)
        _ = (fourth, three, two)
        await daemon.stop()
    }

    /// A session ended by `bye` no longer counts against its uid's limit (the registry keeps a
    /// count per uid rather than scanning every session on each attach).
    @Test(.timeLimit(.minutes(5)))
    func aSessionEndedByByeFreesItsPlaceUnderTheUIDsLimit() async throws {
        let daemon = try await DaemonHarness { $0.maxSessionsPerUID = 2 }
        let registry = try await Self.registry(daemon)
        let ended = try daemon.client()
        _ = try await ended.hello(key: "ended")
        try ended.send(.bye)
        #expect(await ended.waitForClose())
        #expect(await eventually(timeout: .seconds(120)) { registry.sessionCount == 0 })
        let kept = try daemon.client()
        _ = try await kept.hello(key: "kept")
        // One session held, one place free: a new key is served, and "kept" is not evicted for it.
        let third = try daemon.client()
        #expect(try await third.hello(key: "third").resumed == false)
        #expect(registry.sessionCount == 2)
        let keptAgain = try daemon.client()
        #expect(try await keptAgain.hello(key: "kept").resumed)
        _ = (kept, third)
        await daemon.stop()
    }

    @Test(.timeLimit(.minutes(5)))
    func aClosedConnectionStopsCountingAgainstItsUID() async throws {
        let daemon = try await DaemonHarness { $0.maxConnectionsPerUID = 4 }
        let registry = try await Self.registry(daemon)
        // Any connection from before is accepted and gone first: a client welcomed after it
        // proves the backlog is empty (accepts are in order).
        do {
            let first = try daemon.client()
            _ = try await first.hello(key: "before-the-rounds")
        }
        #expect(await eventually(timeout: .seconds(120)) { registry.connectionCount == 0 })
        for round in 0..<5 {
            var fds: [Int32] = []
            for _ in 0..<4 { fds.append(try Self.rawConnect(daemon.socketPath)) }
            #expect(await eventually(timeout: .seconds(120)) { registry.connectionCount == 4 },
                    "round \(round): \(registry.connectionCount) counted")
            for fd in fds { close(fd) }
            #expect(await eventually(timeout: .seconds(120)) { registry.connectionCount == 0 }, "round \(round)")
        }
        let client = try daemon.client()
        #expect(try await client.hello(key: "after-the-churn").access == .readWrite)
        await daemon.stop()
    }

    @Test(.timeLimit(.minutes(5)))
    func refusedConnectionsCloseOnlyTheirOwnDescriptor() async throws {
        let daemon = try await DaemonHarness { $0.maxConnectionsPerUID = 3 }
        let keeper = try daemon.client()
        _ = try await keeper.hello(key: "keeper")
        var held = [try Self.rawConnect(daemon.socketPath), try Self.rawConnect(daemon.socketPath)]
        // Over the limit, and gone before the daemon answers: each refusal closes its own
        // descriptor once (a second close would hit whatever reused the number).
        for _ in 0..<100 { close(try Self.rawConnect(daemon.socketPath)) }
        let refused = try daemon.client()
        let error = try await refused.nextError(timeout: 120)
        #expect(error.code == .tooManyConnections)
        for _ in 0..<5 {
            let status = try await keeper.intent("session", "status")
            guard case .success(let result) = status.outcome else {
                Issue.record("status failed: \(status)")
                continue
            }
            let rss = result?["rss_bytes"]?.int64Value ?? 0
            #expect(rss > 0, "the daemon's own descriptors are intact")
        }
        #expect(try await keeper.intent("list", "refresh").outcome.isSuccess)
        for fd in held { close(fd) }
        held.removeAll()
        await daemon.stop()
    }

    @Test(.timeLimit(.minutes(5)))
    func aUIDOverItsShareIsSlowedNeverDropped() async throws {
        let daemon = try await DaemonHarness {
            $0.intentsPerSecondPerUID = 20
            $0.intentsPerSecond = 1000
        }
        let client = try daemon.client()
        _ = try await client.hello(key: "busy")
        // Three seconds' worth of the uid's share: every intent is answered, in order, none refused.
        let replies = try await Self.sendAtOnceAndAwaitReplies(client, ids: Array(1001...1060))
        #expect(replies.allSatisfy { $0.outcome.isSuccess }, "\(replies.filter { !$0.outcome.isSuccess })")
        let answered = replies.map(\.id)
        #expect(answered == Array(1001...1060))
        await daemon.stop()
    }

    /// Sends a `dismiss_error` intent for each id in one burst, then waits for as many replies,
    /// in the order they come.
    static func sendAtOnceAndAwaitReplies(_ client: WireTestClient, ids: [Int]) async throws -> [ServerMessage.Reply] {
        for id in ids {
            try client.send(.intent(.init(id: id, screen: "list", action: "dismiss_error", args: nil)))
        }
        var replies: [ServerMessage.Reply] = []
        while replies.count < ids.count {
            replies.append(try await client.next(where: "reply \(replies.count + 1) of \(ids.count)", timeout: 60) { message -> ServerMessage.Reply? in
                if case .reply(let reply) = message { reply } else { nil }
            })
        }
        return replies
    }

    /// Frames held back by the uid's share are complete: waiting for the window is not a
    /// trickled frame, however long the wait, and must not trip the frame deadline.
    @Test(.timeLimit(.minutes(5)))
    func framesHeldBackByTheShareDoNotTripTheFrameDeadline() async throws {
        let daemon = try await DaemonHarness {
            $0.intentsPerSecondPerUID = 10
            $0.intentsPerSecond = 1000
            $0.frameTimeoutSeconds = 0.5
        }
        let client = try daemon.client()
        _ = try await client.hello(key: "held-back")
        // Three windows' worth, sent at once: the last are held back for two seconds.
        let answered = try await Self.sendAtOnceAndAwaitReplies(client, ids: Array(2001...2030)).map(\.id)
        #expect(answered == Array(2001...2030))
        await daemon.stop()
    }

    @Test(.timeLimit(.minutes(5)))
    func aConnectStormIsRefusedWithItsReason() async throws {
        let daemon = try await DaemonHarness { $0.connectionsPerSecondPerUID = 5 }
        // A hundred connects at once: far more than five fit in any one second of them.
        var clients: [WireTestClient] = []
        for _ in 0..<100 { clients.append(try daemon.client()) }
        var refusals: [ServerMessage.ErrorMessage] = []
        var welcomes = 0
        for (index, client) in clients.enumerated() {
            try client.send(.hello(.init(protocolVersions: 1...1, client: .init(name: "test", build: "0"), sessionKey: "storm-\(index % 3)")))
            let first = try await client.next(where: "welcome or error", timeout: 120) { message -> ServerMessage? in
                switch message {
                case .welcome, .error: message
                default: nil
                }
            }
            if case .error(let error) = first { refusals.append(error) } else { welcomes += 1 }
        }
        #expect(welcomes >= 1, "the uid's share is served")
        #expect(!refusals.isEmpty)
        #expect(refusals.allSatisfy { $0.code == .tooManyConnections && $0.message.contains("in the last second") })
        clients.removeAll()
        // The uid is served again once its second is over.
        var welcomed = false
        for _ in 0..<100 where !welcomed {
            let client = try daemon.client()
            welcomed = (try? await client.hello(key: "after-the-storm")) != nil
            if !welcomed { try await Task.sleep(for: .milliseconds(200)) }  // pacing the retries, not an outcome
        }
        #expect(welcomed)
        await daemon.stop()
    }

    @Test(.timeLimit(.minutes(5)))
    func restoredSessionsCountTheirDetachedTimeAcrossARestart() async throws {
        let daemon = try await DaemonHarness { $0.retentionSeconds = 300 }
        do {
            let client = try daemon.client()
            _ = try await client.hello(key: "kept")
        }
        #expect(await daemon.stop() == 0)
        // Within its retention: back under its key, detached, and swept once retention ends.
        try await daemon.start { $0.retentionSeconds = 300 }
        let registry = try await Self.registry(daemon)
        #expect(registry.sessionCount == 1)
        #expect(registry.sweep(now: .now + .seconds(301)) == 1, "a restored session expires like any detached one")
        let again = try daemon.client()
        #expect(try await again.hello(key: "kept").resumed == false)
        _ = again
        #expect(await daemon.stop() == 0)
        // Saved again, then started with a retention of a microsecond: shorter than the stop and
        // the start took, so shorter than the time it has been detached.
        try await daemon.start { $0.retentionSeconds = 0.000_001 }
        let shortRegistry = try await Self.registry(daemon)
        #expect(shortRegistry.sessionCount == 0, "a session past its retention is not restored")
        await daemon.stop()
    }
}

/// A flag that escaping closures can share (an `Atomic` cannot be captured).
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    private let changed = Pulse()
    var isSet: Bool { value.load(ordering: .acquiring) }

    func set() {
        value.store(true, ordering: .releasing)
        changed.beat()
    }

    /// Waits until some thread sets it; false only past the generous deadline (a hang).
    func wait() async -> Bool { await changed.until { isSet } }
}
