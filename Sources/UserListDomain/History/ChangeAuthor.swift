/// How a change reached the store, as its history entry tells it.
public enum ChangeVia: String, Equatable, Hashable, Sendable, Codable, CaseIterable {
    /// A person's intent on a screen (the TUI's save, the list's add or remove).
    case intent
    /// A one-shot command (`userctl rename`, `add`, `remove`, `revert`).
    case command
    /// A bulk import.
    case `import`
    /// Another daemon sharing the store made it (what a reader sees of changes not made by its
    /// own daemon; see `HistoryEntry.via(seenFrom:)`).
    case anotherDaemon = "daemon"
}

/// Who makes a change, carried from the connection that asked for it down to the store's write,
/// which records it in the same transaction as the change.
///
/// A value, not ambient state: a session builds its use cases with its author
/// (`UserUseCases.authored(by:)`), so a write with no author cannot be attributed by accident to
/// whoever happened to run before it.
public struct ChangeAuthor: Equatable, Hashable, Sendable, Codable {
    /// The peer's uid from SO_PEERCRED; nil when no connection asked (a store-level write).
    public var uid: UInt32?
    /// The uid's login name when the daemon could resolve it.
    public var userName: String?
    /// The client's name from its hello (`userctl`).
    public var client: String?
    public var via: ChangeVia
    /// Which daemon wrote it (host name and socket), so daemons sharing a store can tell their
    /// own changes from the others'.
    public var daemon: String?
    /// The history entry this change undoes, for a revert.
    public var reverting: Int64?
    /// Where an import came from as the person named it: the file's name, or "stdin".
    public var source: String?

    public init(uid: UInt32?, userName: String? = nil, client: String? = nil, via: ChangeVia,
                daemon: String? = nil, reverting: Int64? = nil, source: String? = nil) {
        self.uid = uid
        self.userName = userName
        self.client = client
        self.via = via
        self.daemon = daemon
        self.reverting = reverting
        self.source = source
    }

    /// A write no connection asked for (tests, tools writing the store directly).
    public static let unattributed = ChangeAuthor(uid: nil, via: .command)

    /// The same author, arriving another way.
    public func via(_ via: ChangeVia) -> ChangeAuthor {
        var copy = self
        copy.via = via
        return copy
    }
}
