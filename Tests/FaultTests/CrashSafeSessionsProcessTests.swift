import Foundation
import Glibc
import Testing
import UserListTestSupport
import UserListWire

/// Sessions across `kill -9`: the journal brings back screens and drafts, and a draft the
/// daemon lost is taken back from the client (`offer_draft`) unless the user changed meanwhile.
@Suite(.childProcesses, .serialized, .timeLimit(.minutes(5)))
struct CrashSafeSessionsProcessTests {
    /// The detail screen's state in `client`'s document, if one is on top.
    static func detail(_ client: FaultClient) -> [String: JSONValue]? {
        guard let top = client.screens.last?.objectValue, top["kind"]?.stringValue == "detail" else { return nil }
        return top["state"]?.objectValue
    }

    @Test func aDraftSurvivesKillNineThroughTheJournal() async throws {
        try await offPool {
            let directory = try TempDirectory("journal")
            defer { directory.remove() }
            let daemon = ChildDaemon(directory: directory.path, sampleData: 20)
            defer { daemon.killHard() }
            try daemon.start()

            let client = try FaultClient(path: daemon.socketPath)
            try client.hello(key: "typist")
            try client.intent("list", "on_appear")
            let id = try #require(client.userIDs.first)
            #expect(try client.intent("session", "open_user", ["id": .string(id)]).isOK)
            #expect(try client.intent("detail", "set_draft_name", ["name": "Typed Before The Crash"]).isOK)
            // Within the journal interval (75 ms) the draft is on disk; then the crash.
            let journal = daemon.stateDirectory + "/sessions.journal"
            #expect(eventually(timeout: .seconds(30), every: .milliseconds(10)) {
                (try? String(contentsOfFile: journal, encoding: .utf8))?.contains("Typed Before The Crash") ?? false
            }, "the draft reached \(journal)")
            daemon.killHard()
            client.disconnect()

            try daemon.start()
            let back = try FaultClient(path: daemon.socketPath)
            let welcome = try back.hello(key: "typist")
            #expect(welcome.resumed, "the session came back under its key")
            let detail = try #require(Self.detail(back), "the detail screen came back: \(back.document)")
            #expect(detail["draft_name"]?.stringValue == "Typed Before The Crash")
            #expect(detail["user_id"]?.stringValue == id)
            // And it is the same screen to work on: the draft saves.
            let saved = try back.intent("detail", "save")
            #expect(saved.result?["name"]?.stringValue == "Typed Before The Crash", "\(String(describing: saved.failure))")
            back.disconnect()
        }
    }

    /// A terminal scrolled down the list keeps its place across a crash: the restored session
    /// reads the list back as far as it had been read (it used to start again at the first page).
    @Test func theListComesBackAsFarAsItHadBeenRead() async throws {
        try await offPool {
            let directory = try TempDirectory("window")
            defer { directory.remove() }
            let daemon = ChildDaemon(directory: directory.path, sampleData: 400)
            defer { daemon.killHard() }
            try daemon.start()

            let client = try FaultClient(path: daemon.socketPath)
            try client.hello(key: "scroller")
            try client.intent("list", "on_appear")
            // Display the last row twice over: two more pages, 150 rows.
            for _ in 0..<2 {
                let last = client.rows.count - 1
                try client.intent("list", "did_display_row", ["index": .int(Int64(last))])
                #expect(client.readUntil { $0.rows.count > last + 1 })
            }
            let read = client.userIDs
            #expect(read.count == 150)
            let journal = daemon.stateDirectory + "/sessions.journal"
            #expect(eventually(timeout: .seconds(30), every: .milliseconds(10)) {
                (try? String(contentsOfFile: journal, encoding: .utf8))?.contains("\"rows\":150") ?? false
            }, "the list's window reached \(journal)")
            daemon.killHard()
            client.disconnect()

            try daemon.start()
            let back = try FaultClient(path: daemon.socketPath)
            #expect(try back.hello(key: "scroller").resumed)
            #expect(back.readUntil { $0.rows.count >= 150 }, "the list came back with \(back.rows.count) rows")
            #expect(back.userIDs == read, "the same rows, in the same places")
            back.disconnect()
        }
    }

    @Test func aSessionEndedByByeIsNotBroughtBackByACrash() async throws {
        try await offPool {
            let directory = try TempDirectory("journal-bye")
            defer { directory.remove() }
            let daemon = ChildDaemon(directory: directory.path, sampleData: 20)
            defer { daemon.killHard() }
            try daemon.start()
            let client = try FaultClient(path: daemon.socketPath)
            try client.hello(key: "leaver")
            try client.intent("list", "on_appear")
            let id = try #require(client.userIDs.first)
            #expect(try client.intent("session", "open_user", ["id": .string(id)]).isOK)
            let journal = daemon.stateDirectory + "/sessions.journal"
            #expect(eventually(timeout: .seconds(30), every: .milliseconds(10)) {
                (try? String(contentsOfFile: journal, encoding: .utf8))?.lowercased().contains(id) ?? false
            })
            _ = client.send(.bye)
            #expect(client.drainUntilClosed(timeout: 120))
            // The end is journaled (a tombstone) within a few seconds.
            #expect(eventually(timeout: .seconds(30), every: .milliseconds(10)) {
                        (try? String(contentsOfFile: journal, encoding: .utf8))?.contains("\"ended\"") ?? false
                    },
                    "the ended session was journaled as ended")
            daemon.killHard()
            try daemon.start()
            let back = try FaultClient(path: daemon.socketPath)
            #expect(try back.hello(key: "leaver").resumed == false, "a session its client ended stays ended")
            back.disconnect()
        }
    }

    @Test func anOfferedDraftIsTakenWhenTheUserIsUnchangedElseAConflictQuotesIt() async throws {
        try await offPool {
            let directory = try TempDirectory("offer")
            defer { directory.remove() }
            // No journal: the crash loses the draft for sure, as one between two writes would.
            let daemon = ChildDaemon(directory: directory.path, sampleData: 20, extra: ["--session-journal-interval", "0"])
            defer { daemon.killHard() }
            try daemon.start()
            let client = try FaultClient(path: daemon.socketPath)
            try client.hello(key: "offerer")
            try client.intent("list", "on_appear")
            let ids = client.userIDs
            try #require(ids.count >= 2)
            #expect(try client.intent("session", "open_user", ["id": .string(ids[0])]).isOK)
            #expect(try client.intent("detail", "set_draft_name", ["name": "Held By The Client"]).isOK)
            daemon.killHard()
            client.disconnect()

            try daemon.start()
            let back = try FaultClient(path: daemon.socketPath)
            try back.hello(key: "offerer")
            #expect(Self.detail(back) == nil, "without the journal the crash lost the screen")
            // Every field the client holds comes back, not the name alone.
            let taken = try back.intent("session", "offer_draft", ["user_id": .string(ids[0]), "name": "Held By The Client",
                                                                   "email": "held@client.example",
                                                                   "avatar_url": "https://client.example/a.png", "base_version": 1])
            #expect(taken.isOK, "\(String(describing: taken.failure))")
            let detail = try #require(Self.detail(back), "offer_draft opened the user's screen: \(back.document)")
            #expect(detail["draft_name"]?.stringValue == "Held By The Client")
            #expect(detail["draft_email"]?.stringValue == "held@client.example")
            #expect(detail["draft_avatar_url"]?.stringValue == "https://client.example/a.png")
            #expect(detail["is_dirty"]?.boolValue == true)
            let empty = try back.intent("session", "offer_draft", ["user_id": .string(ids[0]), "base_version": 1])
            #expect(empty.failure?.code == .invalidArgs, "an offer of no field is refused")

            // The second user changes (version 2) before its draft is offered: a conflict that
            // quotes the text, and the screen is left as it was.
            #expect(try back.intent("session", "rename_user", ["id": .string(ids[1]), "name": "Renamed Meanwhile"]).isOK)
            let refused = try back.intent("session", "offer_draft", ["user_id": .string(ids[1]), "name": "Stale Draft",
                                                                     "email": "stale@draft.example", "base_version": 1])
            #expect(refused.failure?.code == .conflict)
            let message = refused.failure?.message ?? ""
            #expect(message.contains("name \"Stale Draft\" and email \"stale@draft.example\""), "\(message)")
            #expect(Self.detail(back)?["user_id"]?.stringValue == ids[0], "a refused offer leaves the screens alone")
            back.disconnect()
        }
    }
}
