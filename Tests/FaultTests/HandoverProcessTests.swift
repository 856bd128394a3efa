import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire

/// Restarts and upgrades that no client notices: the daemon hands its connections to its next
/// process (through a service manager's descriptor store, or by re-executing itself on
/// SIGUSR2), and an attached client's stream simply goes on, on the same connection.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(5)))
struct HandoverProcessTests {
    /// A client attached to a session with a detail screen and a draft.
    static func attachedEditor(_ socketPath: String, key: String) throws -> (client: FaultClient, id: String) {
        let client = try FaultClient(path: socketPath)
        try client.hello(key: key)
        try client.intent("list", "on_appear")
        guard let id = client.userIDs.first else { throw FaultFailure("the list is empty") }
        guard try client.intent("session", "open_user", ["id": .string(id)]).isOK,
              try client.intent("detail", "set_draft_name", ["name": "Typed Before"]).isOK else {
            throw FaultFailure("could not open and edit \(id)")
        }
        return (client, id)
    }

    /// What the client saw after the restart: its connection open, one welcome and one
    /// snapshot in all, every patch in step, and the session still its own.
    static func expectUnnoticed(_ client: FaultClient, epoch: Int) throws {
        let reply = try client.intent("detail", "set_draft_name", ["name": "Typed After"], timeout: 120)
        #expect(reply.isOK, "\(String(describing: reply.failure))")
        #expect(!client.isClosed, "the connection stayed open")
        let welcomes = client.received.filter { if case .welcome = $0 { true } else { false } }.count
        let snapshots = client.received.filter { if case .snapshot = $0 { true } else { false } }.count
        let goodbyes = client.received.filter { if case .goodbye = $0 { true } else { false } }.count
        #expect(welcomes == 1 && snapshots == 1 && goodbyes == 0,
                "no new handshake, snapshot or goodbye: \(welcomes) welcomes, \(snapshots) snapshots, \(goodbyes) goodbyes")
        #expect(client.epoch == epoch, "the stream stayed in its epoch")
        #expect(client.outOfStep == 0, "every patch applied in order")
        let detail = client.screens.last?.objectValue?["state"]?.objectValue
        #expect(detail?["draft_name"]?.stringValue == "Typed After", "the screens and the draft came along: \(client.document)")
    }

    /// A daemon of its own (notice level, so the adoption shows in its log) with one attached
    /// editor; `body` gets both and the stream's epoch. Both end with the test.
    static func withEditor(_ label: String, extra: [String] = [],
                           _ body: (ChildDaemon, FaultClient, _ epoch: Int) throws -> Void) throws {
        let directory = try TempDirectory(label)
        defer { directory.remove() }
        let daemon = ChildDaemon(directory: directory.path, sampleData: 20, extra: ["--log-level", "notice"] + extra)
        defer { daemon.killHard() }
        try daemon.start()
        let (client, _) = try attachedEditor(daemon.socketPath, key: label)
        defer { client.disconnect() }
        try body(daemon, client, client.epoch)
    }

    /// Re-executes `daemon` and waits until the new image has adopted `count` connections.
    static func upgrade(_ daemon: ChildDaemon, adopting count: Int) {
        let line = "Took over \(count) client connection"
        let adopted = { daemon.wholeLog.components(separatedBy: line).count - 1 }
        let before = adopted()
        daemon.signal(SIGUSR2)
        let seen = whenFilesChange([daemon.logPath], timeout: 30) { adopted() > before }
        #expect(seen, "the new image adopted the connections: \(daemon.log)")
    }

    /// Whether the client's detail screen came to show `draft` (waiting for the patches).
    static func showsDraft(_ client: FaultClient, _ draft: String) -> Bool {
        client.readUntil { $0.screens.last?.objectValue?["state"]?["draft_name"]?.stringValue == draft }
    }

    @Test func sigusr2ReexecutesAndTheClientsStreamGoesOn() async throws {
        try await offPool {
            try Self.withEditor("upgrader") { daemon, client, epoch in
                let pid = daemon.pid
                Self.upgrade(daemon, adopting: 1)
                #expect(daemon.isRunning && daemon.pid == pid, "same process, new image")
                try Self.expectUnnoticed(client, epoch: epoch)
                // And again: the descriptors the first exec placed are handed on from where they are.
                Self.upgrade(daemon, adopting: 1)
                #expect(try client.intent("detail", "set_draft_name", ["name": "Twice"], timeout: 120).isOK)
                #expect(client.outOfStep == 0 && client.epoch == epoch && !client.isClosed)
                // New clients are served by the new image too.
                let newcomer = try FaultClient(path: daemon.socketPath)
                #expect(try newcomer.hello(key: "newcomer").resumed == false)
                newcomer.disconnect()
            }
        }
    }

    /// A frame the client was half-way through sending when the restart began is finished on
    /// the new image: the bytes the old one had read travel with the connection.
    @Test func aFrameCutByTheRestartIsFinishedAfterIt() async throws {
        try await offPool {
            try Self.withEditor("cut") { daemon, client, epoch in
                let (id, frame) = client.intentFrame("detail", "set_draft_name", ["name": "Half Sent"])
                let cut = frame.count / 2
                #expect(client.sendRaw(Array(frame[..<cut])))

                Self.upgrade(daemon, adopting: 1)
                #expect(client.sendRaw(Array(frame[cut...])))
                let reply = try client.reply(to: id, timeout: 120)
                #expect(reply.isOK, "\(String(describing: reply.failure))")
                #expect(Self.showsDraft(client, "Half Sent"), "the intent finished after the restart took effect: \(client.document)")
                try Self.expectUnnoticed(client, epoch: epoch)
            }
        }
    }

    /// Intents read and held back by the uid's share of messages (nothing is dropped there) are
    /// answered, in order, by the new image.
    @Test func intentsHeldBackAtTheRestartAreAnsweredAfterIt() async throws {
        try await offPool {
            try Self.withEditor("held", extra: ["--intents-per-second-per-uid", "2"]) { daemon, client, epoch in
                var ids: [Int] = []
                var burst: [UInt8] = []
                for n in 1...8 {
                    let (id, frame) = client.intentFrame("detail", "set_draft_name", ["name": .string("Queued \(n)")])
                    ids.append(id)
                    burst += frame
                }
                #expect(client.sendRaw(burst))
                // The first is answered: the burst was read, and most of it waits behind the share.
                #expect(try client.reply(to: ids[0]).isOK)

                Self.upgrade(daemon, adopting: 1)
                for id in ids.dropFirst() {
                    let reply = try client.reply(to: id, timeout: 120)
                    #expect(reply.isOK, "intent \(id): \(String(describing: reply.failure))")
                }
                #expect(Self.showsDraft(client, "Queued 8"), "every intent applied, the last one last: \(client.document)")
                try Self.expectUnnoticed(client, epoch: epoch)
            }
        }
    }

    @Test func aRestartThroughTheDescriptorStoreIsUnnoticed() async throws {
        try await offPool {
            let directory = try TempDirectory("fdstore")
            defer { directory.remove() }
            let daemon = ChildDaemon(directory: directory.path, sampleData: 20)  // paths only; the manager runs it
            try FileManager.default.createDirectory(atPath: daemon.stateDirectory, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: daemon.configPath, contents: Data())
            let manager = try TestServiceManager(
                directory: directory.path,
                daemonArguments: [Repo.daemonBinary, "--config", daemon.configPath, "--socket", daemon.socketPath,
                                  "--database", daemon.databasePath, "--state-directory", daemon.stateDirectory,
                                  "--sample-data", "20", "--log-level", "notice"],
                logPath: daemon.logPath)
            defer { manager.tearDown() }
            try manager.start()
            let (client, _) = try Self.attachedEditor(daemon.socketPath, key: "restarted")
            let second = try FaultClient(path: daemon.socketPath)
            try second.hello(key: "restarted")  // a second terminal on the same session
            let epoch = client.epoch
            let firstPID = manager.pid

            try manager.restart()
            #expect(manager.pid != firstPID, "a new process")
            #expect(manager.log.contains("Took over 2 client connections"), "\(manager.log)")
            #expect(manager.storedNames.isEmpty, "the new process took its descriptors out of the store: \(manager.storedNames)")
            try Self.expectUnnoticed(client, epoch: epoch)
            // The other terminal follows the edit made after the restart, on its old connection.
            let mirrored = try second.next(where: "the mirrored draft", timeout: 120) { _ -> Bool? in
                second.screens.last?.objectValue?["state"]?["draft_name"]?.stringValue == "Typed After" ? true : nil
            }
            #expect(mirrored && second.outOfStep == 0 && !second.isClosed)

            // And again: a second restart hands the same connections on.
            try manager.restart()
            #expect(try client.intent("detail", "set_draft_name", ["name": "Twice"], timeout: 120).isOK)
            #expect(client.outOfStep == 0 && client.epoch == epoch)
            client.disconnect()
            second.disconnect()
        }
    }
}
