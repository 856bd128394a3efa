import Foundation

/// One entry of an import file: the user it describes, where it stands in the file (1-based,
/// counted over the whole file), and the version it names, if any.
///
/// `expectedVersion` nil means "whatever is stored": the entry updates the stored user. A version
/// older than the stored one means the file was made before someone changed that user, and the
/// import is refused as a conflict rather than silently undoing that change.
public struct ImportEntry: Equatable, Sendable {
    public var position: Int
    public var user: User
    public var expectedVersion: Int?

    public init(position: Int, user: User, expectedVersion: Int?) {
        self.position = position
        self.user = user
        self.expectedVersion = expectedVersion
    }
}

/// Names an import being staged: the client sends its chunks under it, then commits or aborts.
public struct ImportToken: Hashable, Sendable {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
}

/// What a committed import did.
public struct ImportSummary: Equatable, Sendable {
    /// Entries in the file.
    public var read: Int
    /// Users inserted or changed (each changed one got a new version).
    public var written: Int

    public init(read: Int, written: Int) {
        self.read = read
        self.written = written
    }
}

/// An import applied all or nothing: entries are staged (kept aside, nothing visible), then the
/// commit applies every one of them or, if any is refused, none.
///
/// A store that keeps the staged entries durably (SQLite) finishes a commit it had accepted after
/// a crash, when it is next opened; staged entries never committed are dropped then.
public protocol ImportStaging: Sendable {
    func beginImport() async throws(UserError) -> ImportToken
    /// Adds entries (in file order) to the import; returns how many it holds now.
    func stage(_ entries: [ImportEntry], into token: ImportToken) async throws(UserError) -> Int
    /// Applies every staged entry in one go, or none: the first bad entry (by position) is
    /// reported as `UserError.rejectedEntry`. The staged entries are gone afterwards either way.
    /// A store that keeps history records the users it changes as `author`'s import.
    func commitImport(_ token: ImportToken, by author: ChangeAuthor?) async throws(UserError) -> ImportSummary
    /// Drops the staged entries; nothing was written. An unknown token is not an error.
    func abortImport(_ token: ImportToken) async
}

/// The staging of a store without one of its own: entries are held in memory and given to
/// `importUsers` (one transaction in the stores that can) at the commit. Not durable: a crash
/// loses the staged entries, so nothing is written, which keeps the import all or nothing.
public actor MemoryImportStaging: ImportStaging {
    private let repository: any UserRepository
    private var imports: [ImportToken: [ImportEntry]] = [:]

    public init(repository: any UserRepository) { self.repository = repository }

    public func beginImport() async throws(UserError) -> ImportToken {
        let token = ImportToken("m-" + UUID().uuidString.lowercased())
        imports[token] = []
        return token
    }

    public func stage(_ entries: [ImportEntry], into token: ImportToken) async throws(UserError) -> Int {
        guard imports[token] != nil else { throw ImportStagingError.unknown(token) }
        imports[token]!.append(contentsOf: entries)
        return imports[token]!.count
    }

    public func commitImport(_ token: ImportToken, by author: ChangeAuthor?) async throws(UserError) -> ImportSummary {
        guard let entries = imports.removeValue(forKey: token) else { throw ImportStagingError.unknown(token) }
        let users = entries.map(\.user)
        let written = if let author {
            try await repository.importUsers(users, by: author.via(.import))
        } else {
            try await repository.importUsers(users)
        }
        return ImportSummary(read: entries.count, written: written)
    }

    public func abortImport(_ token: ImportToken) async {
        imports[token] = nil
    }
}

/// The errors every staging shares.
public enum ImportStagingError {
    /// A token the store does not hold: never begun, already committed or aborted, or dropped
    /// by a restart before its commit.
    public static func unknown(_ token: ImportToken) -> UserError {
        .validation(field: .name, message: "There is no import '\(token.rawValue)' being staged "
                    + "(it was committed, aborted, or lost in a daemon restart before its commit); "
                    + "nothing of it was imported.")
    }
}

extension ImportStaging {
    /// A commit no connection asked for (tools and tests): recorded as nobody's.
    public func commitImport(_ token: ImportToken) async throws(UserError) -> ImportSummary {
        try await commitImport(token, by: nil)
    }
}
