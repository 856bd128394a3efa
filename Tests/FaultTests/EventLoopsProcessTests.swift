import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire

extension Fault {
    /// `--event-loops N` runs exactly N threads serving clients, and a change reaches clients on
    /// every one of them; a count the daemon cannot run is refused at start, saying why.
    @Suite struct EventLoops {
        /// The daemon's threads named as its event loops (`userlistd-io<n>`).
        static func loopThreads(of pid: pid_t) -> Int {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            return tasks.filter { task in
                let name = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)) ?? ""
                return name.hasPrefix("userlistd-io")
            }.count
        }

        @Test(arguments: [1, 3])
        func theConfiguredLoopsServeEveryClient(loops: Int) throws {
            let directory = try TempDirectory("loops\(loops)")
            defer { directory.remove() }
            let daemon = ChildDaemon(directory: directory.path, sampleData: 30, extra: ["--event-loops", String(loops)])
            defer { daemon.killHard() }
            try daemon.start()

            // Connections go to the loops in turn: four observers sit on every loop.
            var observers: [FaultClient] = []
            for index in 0..<4 {
                let observer = try FaultClient(path: daemon.socketPath)
                try observer.hello(key: "observer-\(index)")
                _ = try observer.intent("list", "refresh")
                observers.append(observer)
            }
            let writer = try FaultClient(path: daemon.socketPath)
            try writer.hello(key: "writer")
            _ = try writer.intent("list", "refresh")
            let id = try #require(writer.userIDs.first)
            #expect(try writer.intent("session", "open_user", ["id": .string(id)]).isOK)
            _ = try writer.intent("detail", "set_draft_name", ["name": .string("Renamed On \(loops) Loops")])
            #expect(try writer.intent("detail", "save").isOK)

            for (index, observer) in observers.enumerated() {
                let seen = observer.readUntil { client in
                    client.rows.contains { $0["name"]?.stringValue == "Renamed On \(loops) Loops" }
                }
                #expect(seen, "observer \(index) never showed the rename")
            }
            #expect(Self.loopThreads(of: daemon.pid) == loops)
        }

        @Test(arguments: ["0", "5", "many"])
        func aCountTheDaemonCannotRunIsRefused(count: String) throws {
            let directory = try TempDirectory("loopsbad")
            defer { directory.remove() }
            let daemon = ChildDaemon(directory: directory.path, sampleData: 0, extra: ["--event-loops", count])
            defer { daemon.killHard() }
            #expect(throws: FaultFailure.self) { try daemon.start() }
            #expect(daemon.reap() != 0)
            #expect(daemon.log.contains("'event-loops' needs a whole number from 1 to 4, not '\(count)'"))
        }
    }
}
