extension ChangeAuthor {
    /// Who made a change, as a screen or a message names them: the login name, or the uid.
    public var personName: String {
        if let userName { return userName }
        if let uid { return uid == 0 ? "root" : "uid \(uid)" }
        return "someone"
    }
}
