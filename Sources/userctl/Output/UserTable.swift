import UserListClient

/// The NAME EMAIL ID columns of `list` and `list --all`, names and emails escaped
/// (`TerminalText`).
///
/// On a terminal the name and email columns are capped (32 and 36 columns) and longer values cut
/// with "…", so a row fits a screen. For a pipe or a file nothing is ever cut: a script reading
/// `userctl list --all > users.txt` must get every email whole.
struct UserTable {
    let nameWidth: Int
    let emailWidth: Int
    /// Whether values wider than their column are cut (stdout is a terminal).
    let shorten: Bool

    static let nameCap = 32
    static let emailCap = 36

    /// Widths for `users` (for `list --all`, its first page).
    init(fitting users: [UserRow], shorten: Bool) {
        let names = users.map { DisplayWidth.of(DisplayWidth.sanitized($0.name)) }.max() ?? 4
        let emails = users.map { DisplayWidth.of(DisplayWidth.sanitized($0.email)) }.max() ?? 5
        nameWidth = max(4, shorten ? min(Self.nameCap, names) : names)
        emailWidth = max(5, shorten ? min(Self.emailCap, emails) : emails)
        self.shorten = shorten
    }

    func header(style: Style) -> String {
        style.bold(pad("NAME", nameWidth) + "  " + pad("EMAIL", emailWidth) + "  ID")
    }

    func line(_ user: UserRow) -> String {
        pad(DisplayWidth.sanitized(user.name), nameWidth) + "  " + pad(DisplayWidth.sanitized(user.email), emailWidth)
            + "  " + user.id
    }

    func text(_ users: [UserRow], style: Style) -> String {
        ([header(style: style)] + users.map(line)).joined(separator: "\n")
    }

    /// Padded to `width`; cut first only on a terminal. A longer value on a pipe pushes the
    /// columns after it to the right rather than lose characters.
    private func pad(_ text: String, _ width: Int) -> String {
        if shorten { return DisplayWidth.pad(text, to: width) }
        return text + String(repeating: " ", count: max(0, width - DisplayWidth.of(text)))
    }
}
