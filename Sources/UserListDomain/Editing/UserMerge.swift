/// The three-way merge of one user's fields: what a draft started from (`base`), what the
/// person typed (`mine`), and what someone else saved meanwhile (`theirs`), field by field.
///
/// - a field only they changed takes their value (`followed`);
/// - a field only I changed keeps mine;
/// - a field we both changed to the same value is no longer a difference;
/// - a field we both changed to different values is a conflict: `merged` keeps mine, and the
///   person must choose (keep mine, or take theirs) before the draft can be saved.
///
/// Pure: no clock, no store, no author. Fields are compared as typed (the avatar's absence is
/// the empty text), so a draft that matches what is stored is no change.
public struct UserMerge: Equatable, Sendable {
    public var merged: UserFields
    /// Fields that took their value because only they changed it, in field order.
    public var followed: [UserField]
    /// Fields both sides changed to different values, in field order.
    public var conflicts: [UserField]

    public init(base: UserFields, mine: UserFields, theirs: UserFields) {
        var merged = mine
        var followed: [UserField] = []
        var conflicts: [UserField] = []
        for field in UserField.allCases {
            let original = base[field], typed = mine[field], saved = theirs[field]
            guard saved != original else { continue }   // they left it: mine stands
            if typed == original {
                merged[field] = saved
                followed.append(field)
            } else if typed != saved {
                conflicts.append(field)
            }
        }
        self.merged = merged
        self.followed = followed
        self.conflicts = conflicts
    }
}
