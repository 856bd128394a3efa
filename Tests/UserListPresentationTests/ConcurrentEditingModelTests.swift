import Foundation
import Testing
import UserListDomain
import UserListPresentation
import UserListTestSupport

/// Three people edit one user on three screens, in random interleavings of field edits, saves,
/// choices, removals, re-creations and late deliveries of each other's changes (each screen
/// hears the store's changes in commit order, whenever the step says so). After every step:
/// - the store holds what the model says (the last acknowledged write);
/// - a save wrote only its screen's changed fields, each over the value the screen showed as
///   stored, so no acknowledged change is overwritten unless its overwriter was shown it;
/// - every conflict on a screen names who saved it.
@MainActor
@Suite struct ConcurrentEditingModelTests {
    static let names = ["Ada Lovelace", "Grace Hopper", "Linus T", "Barbara Liskov"]
    static let emails = ["ada@x.example", "grace@x.example", "linus@x.example"]
    static let avatars = ["", "https://x.example/1.png", "https://x.example/2.png"]

    /// One person's screen and the changes committed since it last heard.
    final class Person {
        let author: ChangeAuthor
        let screen: UserDetailViewModel
        var pending: [UserChange] = []
        init(_ index: Int, user: User, store: FakeHistoryStore) {
            author = ChangeAuthor(uid: UInt32(1000 + index), userName: "person\(index)", client: "tui", via: .intent)
            screen = UserDetailViewModel(loaded: user, useCases: UserUseCases(repository: store, history: store).authored(by: author))
        }
    }

    /// A seeded xorshift: the same seed, the same run.
    struct Random {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(state % UInt64(bound))
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5])
    func tenThousandStepsKeepEveryoneHonest(seed: UInt64) async throws {
        let id = userID(700)
        var model: User? = User(id: id, name: "Ada Lovelace", email: "ada@x.example")
        let store = FakeHistoryStore([model!])
        let people = (0..<3).map { Person($0, user: model!, store: store) }
        // Beats whenever any screen publishes a state (an author read from the history included).
        let screensChanged = Pulse()
        for person in people { person.screen.onStateChange = { screensChanged.beat() } }
        var random = Random(state: 0x9E37_79B9_7F4A_7C15 &* seed)
        var saves = 0, conflictsSeen = 0

        func broadcast(_ change: UserChange) { for person in people { person.pending.append(change) } }

        for step in 0..<2_000 {
            let person = people[random.next(people.count)]
            let screen = person.screen
            switch random.next(100) {
            case 0..<35:
                let field = UserField.allCases[random.next(3)]
                let pool = field == .name ? Self.names : field == .email ? Self.emails : Self.avatars
                screen.setDraft(field, pool[random.next(pool.count)])
            case 35..<55:
                let before = store.stored(id)
                let shown = screen.state
                let result = await screen.save().value
                let after = store.stored(id)
                if after == before {
                    // Nothing written: nothing to save, or refused (a choice pending, a lost race).
                    continue
                }
                switch result {
                case .success(let saved):
                    #expect(saved == after, "step \(step): the save answers what it wrote")
                    saves += 1
                    // Only this screen's fields were written, each over what it showed as stored.
                    let written = UserFields(saved), stored = before.map(UserFields.init)
                    for field in UserField.allCases {
                        if shown.dirtyFields.contains(field) {
                            #expect(written[field] == shown.draft[field], "step \(step): \(field) as typed")
                            if let stored, let base = shown.user {
                                #expect(UserFields(base)[field] == stored[field],
                                        "step \(step): \(field) overwritten unseen by \(person.author.personName)")
                            }
                        } else if let stored {
                            #expect(written[field] == stored[field], "step \(step): \(field) written though untouched")
                        }
                    }
                    model = saved
                    broadcast(before == nil ? .added(saved) : .saved(saved))
                case .failure(let error):
                    Issue.record("step \(step): the store changed though the save failed: \(error)")
                }
            case 55..<85:
                guard let waiting = people.filter({ !$0.pending.isEmpty }).randomElement(using: &random) else { continue }
                waiting.screen.apply(waiting.pending.removeFirst())
            case 85..<93:
                guard let conflict = screen.state.conflicts.first else { continue }
                conflictsSeen += 1
                if random.next(2) == 0 { screen.keepMine(conflict.field) } else { screen.takeTheirs(conflict.field) }
            case 93..<96:
                guard model != nil else { continue }
                try await store.remove(id: id, by: person.author)
                model = nil
                broadcast(.removed(id: id))
            default:
                screen.recreate()
            }
            #expect(store.stored(id) == model, "step \(step): the store holds the model")
            // Every conflict shown names its author (read from the history, asynchronously).
            await screensChanged.expect {
                people.allSatisfy { $0.screen.state.conflicts.allSatisfy { $0.author != nil } }
            }
        }
        #expect(saves > 40 && conflictsSeen > 5, "the run exercised saves (\(saves)) and conflicts (\(conflictsSeen))")
    }
}

extension Array {
    fileprivate func randomElement(using random: inout ConcurrentEditingModelTests.Random) -> Element? {
        isEmpty ? nil : self[random.next(count)]
    }
}
