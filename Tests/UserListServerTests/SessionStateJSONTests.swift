import Foundation
import Testing
import UserListDomain
import UserListPresentation
import UserListWire
@testable import UserListServer

/// The saved sessions' hand-written JSON against Foundation's `Codable`: what this version
/// writes, an older daemon (which reads with `JSONDecoder`) reads back the same, and what an
/// older daemon wrote (with `JSONEncoder`) the fast reader takes, without falling back.
@Suite struct SessionStateJSONTests {
    static let alice = User(id: UUID(uuidString: "6F1D2C3B-0A00-4000-8000-00000000000A")!, name: "Ålice \"the\" \\ 山\u{1}",
                            email: "alice@example.com", avatarURL: "https://example.com/a.png?x=1&y=</", version: 7)
    static let bob = User(id: UUID(), name: "Bob", email: "bob@example.com", version: 2)

    /// States that cover every member: nils and values, every screen kind, odd text.
    static var states: [NavigationState] {
        var plain = UserListState()
        plain.users = [alice, bob]
        var searched = UserListState()
        searched.search = "ad\ta"
        searched.loading = .previousPage
        searched.errorMessage = "The store is unavailable"
        searched.hasMore = true
        searched.hasPrevious = true
        searched.totalCount = 1_000_000
        searched.isStale = true
        var editing = UserDetailState(userID: alice.id)
        editing.user = alice
        editing.draftName = "Alice\n Renamed 😀"
        editing.isSaving = true
        editing.errorMessage = "Someone else changed this user"
        editing.draftEmail = "alice@renamed.example"
        editing.conflicts = [FieldConflict(field: .name, theirs: bob.name, author: "bob", version: 9)]
        editing.followed = [FollowedChange(field: .avatarURL, version: 9)]
        var history = UserHistoryState(userID: alice.id)
        history.entries = [HistoryEntry(id: 51, at: Date(timeIntervalSinceReferenceDate: 786_000_000.25), userID: alice.id,
                                        kind: .saved, author: ChangeAuthor(uid: 1000, userName: "alice", via: .intent),
                                        before: UserFields(alice), after: UserFields(bob), versionAfter: 8)]
        history.reverting = 51
        // Removed while open: who removed it, and the user the draft was based on (or not known).
        var removed = UserDetailState(userID: bob.id)
        removed.draftName = "Bob B"
        removed.removal = Removal(author: "alice", base: bob)
        var removedUnknown = removed
        removedUnknown.removal = Removal(base: alice)
        var removedBare = removed
        removedBare.removal = Removal()
        return [
            NavigationState(screens: [.list(UserListState())]),
            NavigationState(screens: [.list(plain), .detail(UserDetailState(userID: bob.id))]),
            NavigationState(screens: [.list(searched), .detail(editing), .history(history)]),
            NavigationState(screens: [.list(plain), .detail(removed)]),
            NavigationState(screens: [.list(plain), .detail(removedUnknown)]),
            NavigationState(screens: [.list(plain), .detail(removedBare)]),
        ]
    }

    static var sessions: [SavedSession] {
        states.enumerated().map { index, state in
            SavedSession(key: SessionKey(uid: UInt32(index == 2 ? UInt32.max : 1000), clientKey: "tty\(index) \"x\""),
                         id: "s-\(index)", state: state,
                         detachedAt: index == 0 ? nil : Date(timeIntervalSinceReferenceDate: 786_123_456.789_012 + Double(index)),
                         listWindow: index == 1 ? UserListWindow(rows: 250, fromEnd: true) : nil,
                         client: index.isMultiple(of: 2) ? "userctl \"tui\" \(index)" : nil)
        }
    }

    static func expectSame(_ a: SavedSession, _ b: SavedSession) {
        #expect(a.key == b.key)
        #expect(a.id == b.id)
        #expect(a.state == b.state)
        #expect(a.detachedAt == b.detachedAt)
        #expect(a.listWindow == b.listWindow)
        #expect(a.client == b.client)
    }

    @Test func whatThisVersionWritesAnOlderOneReadsTheSame() throws {
        for session in Self.sessions {
            var bytes: [UInt8] = []
            SessionStateJSON.write(session, into: &bytes)
            let decoded = try JSONDecoder().decode(SavedSession.self, from: Data(bytes))
            Self.expectSame(decoded, session)
            let fast = try #require(SessionStateJSON.savedSession(try JSONValue(parsing: bytes)))
            Self.expectSame(fast, session)
        }
    }

    @Test func whatAnOlderVersionWroteTheFastReaderTakes() throws {
        for session in Self.sessions {
            let data = try JSONEncoder().encode(session)
            let fast = try #require(SessionStateJSON.savedSession(try JSONValue(parsing: data)),
                                    "the fast reader fell back on \(String(decoding: data, as: UTF8.self))")
            Self.expectSame(fast, session)
        }
    }

    @Test func anUnknownShapeIsLeftToFoundation() throws {
        let unknownLoading = #"{"key":{"uid":1,"clientKey":"k"},"id":"s","state":{"screens":[{"list":{"_0":{"loading":"sideways"}}}]}}"#
        #expect(SessionStateJSON.savedSession(try JSONValue(parsing: unknownLoading)) == nil)
        let unknownScreen = #"{"key":{"uid":1,"clientKey":"k"},"id":"s","state":{"screens":[{"map":{"_0":{}}}]}}"#
        #expect(SessionStateJSON.savedSession(try JSONValue(parsing: unknownScreen)) == nil)
        // A member an older writer left out is read as `Codable` reads it.
        let sparse = #"{"key":{"uid":1,"clientKey":"k"},"id":"s","state":{"screens":[{"list":{"_0":{}}}]}}"#
        let read = try #require(SessionStateJSON.savedSession(try JSONValue(parsing: sparse)))
        #expect(read.state == (try JSONDecoder().decode(SavedSession.self, from: Data(sparse.utf8))).state)
        // So is a session saved before the client's name was (it restores with none).
        #expect(read.client == nil)
        #expect(try JSONDecoder().decode(SavedSession.self, from: Data(sparse.utf8)).client == nil)
    }

    @Test func aHandoverFileRoundTripsBothWays() throws {
        var file = Handover.File()
        for (index, session) in Self.sessions.enumerated() {
            file.streams.append(Handover.Stream(name: "ul-c-\(index)", key: session.key, epoch: 1_764_000_000_000 + index, seq: index * 3,
                                                awaitingSnapshot: index == 1, unsent: Data([0, 1, 2, 255].prefix(index + 1)),
                                                unhandled: index.isMultiple(of: 2) ? nil : Data([0, 0, 0, 9, 123, 34].prefix(index + 2))))
            file.hold(session.state, for: session.key)
        }
        file.throughStore = false
        let ours = try JSONDecoder().decode(Handover.File.self, from: Data(file.jsonBytes()))
        let theirs = try #require(Handover.File(json: try JSONValue(parsing: try JSONEncoder().encode(file))))
        for read in [ours, theirs] {
            #expect(read.streams.map(\.name) == file.streams.map(\.name))
            #expect(read.streams.map(\.key) == file.streams.map(\.key))
            #expect(read.streams.map(\.epoch) == file.streams.map(\.epoch))
            #expect(read.streams.map(\.seq) == file.streams.map(\.seq))
            #expect(read.streams.map(\.awaitingSnapshot) == file.streams.map(\.awaitingSnapshot))
            #expect(read.streams.map(\.unsent) == file.streams.map(\.unsent))
            #expect(read.streams.map(\.unhandled) == file.streams.map(\.unhandled))
            #expect(read.states.map { read.held($0) } == file.states.map { file.held($0) })
            #expect(read.lists == file.lists)
            #expect(read.throughStore == false)
        }
    }
}
