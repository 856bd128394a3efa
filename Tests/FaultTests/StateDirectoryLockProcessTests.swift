import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire

/// One daemon per state directory (`StateDirectoryLock`): a second daemon pointed at a live
/// daemon's state directory, on a socket of its own, exits at once naming the holder and
/// touches nothing; once the holder is gone (kill -9 included) the directory is free, with the
/// holder's journaled sessions intact; an upgrade in place keeps the directory locked.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(5)))
struct StateDirectoryLockProcessTests {
    /// A daemon on a directory of its own, but on `holder`'s state directory.
    static func intruder(_ directory: TempDirectory, on holder: ChildDaemon) -> ChildDaemon {
        ChildDaemon(directory: directory.path, sampleData: 0, extra: ["--state-directory", holder.stateDirectory])
    }

    /// Starts `intruder` and expects it refused: exit 75, the holder named, no socket of its own.
    static func expectRefused(_ intruder: ChildDaemon, holder: ChildDaemon) {
        #expect(throws: FaultFailure.self, "the second daemon must not start") { try intruder.start() }
        #expect(intruder.waitForExit(timeout: generousDeadline) == 75, "EX_TEMPFAIL: \(intruder.log)")
        #expect(intruder.log.contains("pid \(holder.pid)") && intruder.log.contains(holder.socketPath),
                "the message names the holder's pid and socket: \(intruder.log)")
        #expect(access(intruder.socketPath, F_OK) != 0, "the refused daemon made no socket")
    }

    @Test func aSecondDaemonIsRefusedAndTheHoldersDraftSurvivesItsCrash() async throws {
        try await offPool {
            let first = try TempDirectory("lock-holder"), second = try TempDirectory("lock-intruder")
            defer { first.remove(); second.remove() }
            let holder = ChildDaemon(directory: first.path, sampleData: 10)
            defer { holder.killHard() }
            try holder.start()

            // bob's draft, journaled.
            let bob = try FaultClient(path: holder.socketPath)
            try bob.hello(key: "bob")
            try bob.intent("list", "on_appear")
            let id = try #require(bob.userIDs.first)
            #expect(try bob.intent("session", "open_user", ["id": .string(id)]).isOK)
            #expect(try bob.intent("detail", "set_draft_name", ["name": "Kept Through It All"]).isOK)
            let journal = holder.stateDirectory + "/sessions.journal"
            #expect(eventually {
                (try? String(contentsOfFile: journal, encoding: .utf8))?.contains("Kept Through It All") ?? false
            }, "the draft reached \(journal)")

            let intruder = Self.intruder(second, on: holder)
            defer { intruder.killHard() }
            Self.expectRefused(intruder, holder: holder)
            #expect(access(journal, F_OK) == 0, "the holder's journal is still there")
            #expect(try bob.intent("detail", "set_draft_name", ["name": "Kept Through It All"]).isOK,
                    "the holder serves on")

            // The holder crashes: the kernel releases the lock, and the next daemon on the
            // directory (on its own socket) brings bob's screen and draft back.
            holder.killHard()
            bob.disconnect()
            try intruder.start()
            let back = try FaultClient(path: intruder.socketPath)
            defer { back.disconnect() }
            #expect(try back.hello(key: "bob").resumed, "bob's session came back")
            let detail = back.screens.last?.objectValue?["state"]?.objectValue
            #expect(detail?["draft_name"]?.stringValue == "Kept Through It All", "\(back.document)")
        }
    }

    @Test func anUpgradeInPlaceKeepsTheDirectoryLocked() async throws {
        try await offPool {
            let first = try TempDirectory("lock-upgrade"), second = try TempDirectory("lock-upgrade-intruder")
            defer { first.remove(); second.remove() }
            let holder = ChildDaemon(directory: first.path, sampleData: 5, extra: ["--log-level", "notice"])
            defer { holder.killHard() }
            try holder.start()
            let client = try FaultClient(path: holder.socketPath)
            defer { client.disconnect() }
            try client.hello(key: "watcher")
            HandoverProcessTests.upgrade(holder, adopting: 1)
            #expect(holder.isRunning, "the new image adopted the lock instead of refusing itself: \(holder.log)")
            let intruder = Self.intruder(second, on: holder)
            defer { intruder.killHard() }
            Self.expectRefused(intruder, holder: holder)
        }
    }
}
