/// "1 user", "2 users": counts in messages read as a person would write them.
enum Plural {
    static func users(_ count: Int) -> String { count == 1 ? "1 user" : "\(count) users" }
}
