import Foundation
import UserListTestSupport
import Glibc
import Testing
import UserListWire

extension Fault {
    /// 1,000 clients connect and vanish at once, in four ways; afterwards the daemon holds no
    /// more descriptors than before and, past the retention time, no session nobody uses.
    @Suite struct VanishingClients {
        @Test(.timeLimit(.minutes(5)))
        func aThousandVanishingClientsLeakNeitherDescriptorsNorSessions() async throws {
            _ = raiseDescriptorLimit(to: 8192)
            let directory = try TempDirectory("vanish")
            defer { directory.remove() }
            let daemon = ChildDaemon(directory: directory.path, sampleData: 20, extra: [
                // Retention 10 s: long enough that the sessions the hellos made are surely seen
                // before a sweep drops them, short enough that the sweep is waited for below.
                "--retention", "10", "--max-connections-per-uid", "4096", "--max-sessions-per-uid", "4096",
                "--intents-per-second", "1000",
                // No session journal: it opens its file from a lowest-priority thread, maybe
                // after the baseline below is counted, and would count as a descriptor leaked.
                "--session-journal-interval", "0",
            ])
            defer { daemon.killHard() }
            try daemon.start()
            let report = try await offPool { try Self.run(daemon) }
            print("vanishing clients: \(report)")
        }

        static func run(_ daemon: ChildDaemon) throws -> String {
            let monitor = try FaultClient(path: daemon.socketPath)
            try monitor.hello(key: "monitor")
            #expect(try monitor.intent("list", "refresh").isOK)
            let ids = monitor.userIDs
            try #require(ids.count >= 5)
            let baseline = daemon.openDescriptorCount

            let encoder = FrameEncoder(maximumFrameSize: 1 << 20)
            func hello(_ key: String) throws -> [UInt8] {
                try encoder.encode(ClientMessage.hello(.init(protocolVersions: 1...1, client: .init(name: "vanish", build: "0"), sessionKey: key)))
            }
            func intent(_ id: Int, _ screen: String, _ action: String, _ args: [String: JSONValue]) throws -> [UInt8] {
                try encoder.encode(ClientMessage.intent(.init(id: id, screen: screen, action: action, args: args)))
            }
            // Connect all first, so that they are all open at once; then speak; then vanish.
            var sockets: [Int32] = []
            for _ in 0..<1000 { sockets.append(try RawSocket.connect(daemon.socketPath)) }
            for (index, fd) in sockets.enumerated() {
                switch index % 4 {
                case 0: break  // connect and vanish
                case 1:  // mid-handshake: half a hello frame
                    let frame = try hello("half-\(index)")
                    RawSocket.sendAll(fd, Array(frame.prefix(frame.count / 2)))
                case 2:  // right after hello
                    RawSocket.sendAll(fd, try hello("after-hello-\(index)"))
                default:  // mid-intent: a save on its way
                    let user = ids[index % ids.count]
                    RawSocket.sendAll(fd, try hello("mid-intent-\(index)")
                        + intent(1, "session", "open_user", ["id": .string(user)])
                        + intent(2, "detail", "set_draft_name", ["name": .string("vanished \(index)")])
                        + intent(3, "detail", "save", [:]))
                }
            }
            let peak = daemon.openDescriptorCount
            for fd in sockets { close(fd) }
            let vanished = Date()
            // The hellos made sessions (so the sweep below has something to sweep): wait for them.
            var made = 0
            eventually(every: .milliseconds(100)) {
                made = max(made, (try? monitor.intent("session", "sessions").result?.arrayValue?.count) ?? 0)
                return made > 100
            }
            #expect(made > 100, "only \(made) sessions after the clients vanished")

            // Descriptors: back to the baseline, allowing a few.
            var descriptors = daemon.openDescriptorCount
            eventually(every: .milliseconds(100)) {
                descriptors = daemon.openDescriptorCount
                return descriptors <= baseline + 3
            }
            #expect(descriptors <= baseline + 3, "\(descriptors) descriptors open, \(baseline) before the 1,000 clients")

            // Sessions: past retention (10 s) and a sweep (every 5 s), only the monitor's is left.
            var sessions: [JSONValue] = []
            var connections: Int64 = -1
            try eventually(timeout: .seconds(2 * generousDeadline), every: .milliseconds(500)) {
                sessions = try monitor.intent("session", "sessions").result?.arrayValue ?? []
                connections = try monitor.intent("session", "status").result?["connections"]?.int64Value ?? -1
                return sessions.count <= 1 && connections == 1
            }
            let settled = Date().timeIntervalSince(vanished)
            let idle = sessions.filter { ($0["clients"]?.int64Value ?? 0) == 0 }
            #expect(idle.isEmpty, "\(idle.count) detached sessions outlived the retention time: \(idle.prefix(3))")
            #expect(sessions.count == 1 && sessions.first?["key"]?.stringValue == "monitor", "sessions left: \(sessions.count)")
            #expect(connections == 1, "the daemon still counts \(connections) connections")
            #expect(daemon.reap() == nil, "the daemon died: \(daemon.log)")
            // And it still serves.
            let after = try FaultClient(path: daemon.socketPath)
            try after.hello(key: "after")
            #expect(try after.intent("list", "refresh").isOK)
            return "\(made) sessions right after; fds baseline \(baseline), peak \(peak), after \(descriptors); sessions settled after \(String(format: "%.1f", settled)) s"
        }
    }
}
