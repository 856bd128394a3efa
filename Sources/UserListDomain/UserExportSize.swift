/// How many bytes of an export page a user takes at least, as the store can count them before
/// reading the user out: 128 for the object's keys, id, version and punctuation, plus the UTF-8
/// length of its name, email and avatar URL. The JSON is never smaller (escaping only adds), so a
/// store that ends an export page once this passes the page's byte budget never ends it before
/// the caller's exact cut (`Session.withinExportBudget`) would.
public enum UserExportSize {
    public static let perUser = 128

    public static func lowerBound(_ user: User) -> Int {
        perUser + user.name.utf8.count + user.email.utf8.count + (user.avatarURL?.utf8.count ?? 0)
    }
}
