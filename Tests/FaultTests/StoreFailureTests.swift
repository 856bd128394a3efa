import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire

extension Fault {
    /// The store fails under the daemon: the disk fills up, the file turns read-only. A save
    /// then fails with `unavailable` and a message a person can act on, nothing is half-written,
    /// and once the fault is gone the next save succeeds.
    @Suite struct StoreFailure {
        /// Whether this sandbox lets root mount a tmpfs (the only honest way to fill a disk).
        static let tmpfsWorks: Bool = {
            guard let directory = try? TempDirectory("probe-mount") else { return false }
            defer { directory.remove() }
            let mounted = Shell.run("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", directory.path]).status == 0
            if mounted { Shell.run("umount", [directory.path]) } else { print("skipping the disk-full test: mount -t tmpfs is not permitted here") }
            return mounted
        }()

        /// Whether `chattr +i` works here (root ignores permission bits, not the immutable flag).
        static let chattrWorks: Bool = {
            guard let directory = try? TempDirectory("probe-chattr") else { return false }
            defer { directory.remove() }
            let file = directory.path + "/f"
            _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
            let works = Shell.run("chattr", ["+i", file]).status == 0
            Shell.run("chattr", ["-i", file])
            if !works { print("skipping the read-only test: chattr +i is not permitted here") }
            return works
        }()

        /// Opens `user` in a detail screen and saves `name`; returns the reply.
        static func rename(_ client: FaultClient, _ name: String) throws -> ServerMessage.Reply {
            _ = try client.intent("detail", "set_draft_name", ["name": .string(name)])
            return try client.intent("detail", "save")
        }

        @Test(.enabled(if: StoreFailure.tmpfsWorks, "mount -t tmpfs is not permitted here"), .timeLimit(.minutes(5)))
        func aFullDiskFailsTheSaveCleanlyAndServiceResumesWhenSpaceReturns() async throws {
            let directory = try TempDirectory("full")
            defer { directory.remove() }
            let mount = directory.path + "/small"
            try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
            let mounted = Shell.run("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mount])
            try #require(mounted.status == 0, "mount: \(mounted.output)")
            let daemon = ChildDaemon(directory: directory.path, databasePath: mount + "/users.sqlite3", sampleData: 20)
            defer {
                daemon.killHard()
                Shell.run("umount", ["-l", mount])
            }
            try daemon.start()
            let filler = mount + "/filler"
            let report = try await offPool { () -> String in
                let client = try FaultClient(path: daemon.socketPath)
                try client.hello(key: "full")
                _ = try client.intent("list", "refresh")
                let id = try #require(client.userIDs.first)
                #expect(try client.intent("session", "open_user", ["id": .string(id)]).isOK)
                let first = try Self.rename(client, "Before The Disk Filled")
                try #require(first.isOK)
                var lastAck = (name: "Before The Disk Filled", version: Int(first.result?["version"]?.int64Value ?? 0))

                // Fill the disk to the last byte.
                let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                try #require(fd >= 0)
                let chunk = [UInt8](repeating: 0x55, count: 4096)
                while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
                let fillError = errno
                close(fd)
                #expect(fillError == ENOSPC, "filling stopped with errno \(fillError)")

                // Saves now fail (the WAL may have room for a few frames first).
                var failure: ServerMessage.ErrorBody?
                for attempt in 1...100 {
                    let name = "Disk Full Attempt \(attempt)"
                    let reply = try Self.rename(client, name)
                    if let body = reply.failure {
                        failure = body
                        break
                    }
                    lastAck = (name, Int(reply.result?["version"]?.int64Value ?? 0))
                }
                let body = try #require(failure, "100 saves succeeded on a full disk")
                #expect(body.code == .unavailable, "\(body.code.rawValue): \(body.message)")
                #expect(body.message.lowercased().contains("full") || body.message.lowercased().contains("space"),
                        "the message does not say the disk is full: \(body.message)")

                // Nothing half-written: the file is sound and holds the last acknowledged save.
                #expect(try StoreProbe.integrityCheck(daemon.databasePath) == "ok")
                let stored = try StoreProbe.users(daemon.databasePath)[id]
                #expect(stored?.name == lastAck.name && stored?.version == lastAck.version, "stored \(String(describing: stored)), last acknowledged \(lastAck)")

                // Space returns: the next save goes through, and so do more.
                unlink(filler)
                let resumed = try Self.rename(client, "After The Disk Emptied")
                #expect(resumed.isOK, "\(String(describing: resumed.failure))")
                let again = try Self.rename(client, "And Once More")
                #expect(again.isOK, "\(String(describing: again.failure))")
                #expect(try StoreProbe.users(daemon.databasePath)[id]?.name == "And Once More")
                #expect(try StoreProbe.integrityCheck(daemon.databasePath) == "ok")
                // And other clients were served all along.
                let other = try FaultClient(path: daemon.socketPath)
                try other.hello(key: "other")
                return "full disk: \(body.code.rawValue): \(body.message)"
            }
            print(report)
        }

        @Test(.enabled(if: StoreFailure.chattrWorks, "chattr +i is not permitted here"), .timeLimit(.minutes(5)))
        func aReadOnlyDatabaseFailsTheSaveCleanlyAndServiceResumesWhenWritable() async throws {
            let directory = try TempDirectory("readonly")
            defer { directory.remove() }
            let daemon = ChildDaemon(directory: directory.path, sampleData: 20)
            defer { daemon.killHard() }
            try daemon.start()
            let files = [daemon.databasePath, daemon.databasePath + "-wal"].filter { FileManager.default.fileExists(atPath: $0) }
            defer { Shell.run("chattr", ["-i"] + files) }
            let report = try await offPool { () -> String in
                let client = try FaultClient(path: daemon.socketPath)
                try client.hello(key: "readonly")
                _ = try client.intent("list", "refresh")
                let id = try #require(client.userIDs.first)
                #expect(try client.intent("session", "open_user", ["id": .string(id)]).isOK)
                let first = try Self.rename(client, "Before Read Only")
                try #require(first.isOK)
                let version = Int(first.result?["version"]?.int64Value ?? 0)

                let flagged = Shell.run("chattr", ["+i"] + files)
                try #require(flagged.status == 0, "chattr: \(flagged.output)")
                let refused = try Self.rename(client, "While Read Only")
                let body = try #require(refused.failure, "a save succeeded on an immutable database")
                #expect(body.code == .unavailable, "\(body.code.rawValue): \(body.message)")
                #expect(!body.message.isEmpty)
                let stored = try StoreProbe.users(daemon.databasePath)[id]
                #expect(stored?.name == "Before Read Only" && stored?.version == version, "stored \(String(describing: stored))")

                Shell.run("chattr", ["-i"] + files)
                let resumed = try Self.rename(client, "After Read Only")
                #expect(resumed.isOK, "\(String(describing: resumed.failure))")
                #expect(try StoreProbe.users(daemon.databasePath)[id]?.name == "After Read Only")
                #expect(try StoreProbe.integrityCheck(daemon.databasePath) == "ok")
                return "read-only: \(body.code.rawValue): \(body.message)"
            }
            print(report)
        }
    }
}
