import Testing
import UserListDomain

/// The three-way merge, for every combination of what each side did to each field: left it,
/// changed it to "a", or changed it to "b" (3 × 3 per field, 9³ = 729 users in all), against
/// the outcome table written out by hand for one field.
struct UserMergeTests {
    /// What one side did to a field.
    enum Edit: CaseIterable { case kept, toA, toB }

    /// The outcome of one field, as a person sees it.
    enum Outcome: Equatable { case mine, theirs(followed: Bool), conflict }

    /// The table: (mine, theirs) → outcome.
    static let expected: [Edit: [Edit: Outcome]] = [
        .kept: [.kept: .mine, .toA: .theirs(followed: true), .toB: .theirs(followed: true)],
        .toA: [.kept: .mine, .toA: .mine, .toB: .conflict],
        .toB: [.kept: .mine, .toA: .conflict, .toB: .mine],
    ]

    static let base = UserFields(name: "Ada Lovelace", email: "ada@example.com", avatarURL: nil)

    static func value(_ edit: Edit, _ field: UserField) -> String {
        switch edit {
        case .kept: base[field]
        case .toA: field == .email ? "a@example.com" : (field == .avatarURL ? "https://a.example/1.png" : "A Name")
        case .toB: field == .email ? "b@example.com" : (field == .avatarURL ? "https://b.example/2.png" : "B Name")
        }
    }

    @Test func everyCombinationOfEveryFieldMergesAsTheTableSays() {
        let fields = UserField.allCases
        let pairs = Edit.allCases.flatMap { mine in Edit.allCases.map { (mine, $0) } }
        var checked = 0
        for n in pairs { for e in pairs { for a in pairs {
            let edits: [UserField: (mine: Edit, theirs: Edit)] = [.name: n, .email: e, .avatarURL: a]
            var mine = Self.base, theirs = Self.base
            for field in fields {
                mine[field] = Self.value(edits[field]!.mine, field)
                theirs[field] = Self.value(edits[field]!.theirs, field)
            }
            let merge = UserMerge(base: Self.base, mine: mine, theirs: theirs)
            for field in fields {
                let (m, t) = edits[field]!
                switch Self.expected[m]![t]! {
                case .mine:
                    #expect(merge.merged[field] == mine[field])
                    #expect(!merge.followed.contains(field) && !merge.conflicts.contains(field))
                case .theirs(let followed):
                    #expect(merge.merged[field] == theirs[field])
                    #expect(merge.followed.contains(field) == followed && !merge.conflicts.contains(field))
                case .conflict:
                    #expect(merge.merged[field] == mine[field], "a conflict keeps what I typed until I choose")
                    #expect(merge.conflicts.contains(field) && !merge.followed.contains(field))
                }
            }
            #expect(merge.followed == fields.filter(merge.followed.contains), "in field order")
            #expect(merge.conflicts == fields.filter(merge.conflicts.contains), "in field order")
            checked += 1
        } } }
        #expect(checked == 729)
    }

    @Test func anAvatarClearedByThemIsFollowedAsNone() {
        let base = UserFields(name: "Ada", email: "ada@example.com", avatarURL: "https://x.example/a.png")
        let theirs = UserFields(name: "Ada", email: "ada@example.com", avatarURL: nil)
        let merge = UserMerge(base: base, mine: base, theirs: theirs)
        #expect(merge.merged.avatarURL == nil)
        #expect(merge.followed == [.avatarURL])
    }

    @Test func nothingChangedByThemChangesNothing() {
        var mine = Self.base
        mine.name = "Typed"
        let merge = UserMerge(base: Self.base, mine: mine, theirs: Self.base)
        #expect(merge.merged == mine && merge.followed.isEmpty && merge.conflicts.isEmpty)
    }
}
