/// What `userctl import` says it did: entries read, the distinct users they name, and the users
/// the daemon wrote. The rest of the users were already as the file has them; the rest of the
/// entries named a user an earlier entry named (the daemon applies each user's last entry).
struct ImportReport: Equatable {
    var read: Int
    var users: Int
    var written: Int

    func summary(of path: String) -> String {
        var notes: [String] = []
        // The file's distinct users can exceed the entries the daemon counted only if the two
        // disagree on what the file holds; the daemon's counts win then.
        let named = min(users, read)
        if named > written { notes.append("\(named - written) already up to date") }
        if read > named {
            let repeats = read - named
            let repeated = repeats == 1 ? "entry repeats a user" : "entries repeat users"
            notes.append("\(repeats) \(repeated) named earlier in the file: each user's last entry counts")
        }
        let noted = notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")"
        return "imported \(Plural.users(written)) from \(path)" + noted
    }
}
