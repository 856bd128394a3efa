import Foundation
import UserListDomain

/// Logs each change this daemon makes once, to journald, with who made it
/// (`USERLISTD_ACTOR_UID`, `USERLISTD_ACTOR`), the user's id (`USERLISTD_USER_ID`), what
/// (`USERLISTD_CHANGE`) and how (`USERLISTD_VIA`), so `journalctl USERLISTD_ACTOR_UID=1001`
/// answers "what did alice change". An import is one line with its count. Everything else is
/// passed through untouched.
final class JournaledUserRepository: UserRepository {
    private let base: any UserRepository
    private let logger: Logger

    init(base: any UserRepository, logger: Logger) {
        self.base = base
        self.logger = logger
    }

    /// Nothing is built when the logger drops `.info` (a daemon at `--log-level warning`):
    /// the fields and the message are a dictionary, two UUID texts and an interpolation per
    /// write, made on the writer's path for nothing.
    private func log(_ change: String, _ id: UUID?, _ author: ChangeAuthor, _ extra: [String: String] = [:]) {
        guard logger.isEnabled(.info) else { return }
        var fields = extra
        fields["USERLISTD_CHANGE"] = change
        fields["USERLISTD_VIA"] = author.via.rawValue
        if let id { fields["USERLISTD_USER_ID"] = UUIDText.lowercase(id) }
        if let uid = author.uid { fields["USERLISTD_ACTOR_UID"] = String(uid) }
        if let name = author.userName { fields["USERLISTD_ACTOR"] = name }
        if let client = author.client { fields["USERLISTD_CLIENT"] = client }
        if let entry = author.reverting { fields["USERLISTD_REVERTS"] = String(entry) }
        let who = author.userName ?? author.uid.map { "uid \($0)" } ?? "unknown"
        let what = id.map { "user \(UUIDText.lowercase($0))" } ?? "users"
        logger.info("\(who) \(change) \(what) (\(author.via.rawValue))", fields)
    }

    func update(_ user: User, by author: ChangeAuthor) async throws(UserError) -> User {
        let saved = try await base.update(user, by: author)
        // A save of what is stored changed nothing (same version back): nothing to log.
        if saved.version != user.version { log(author.reverting == nil ? "saved" : "reverted", user.id, author) }
        return saved
    }

    func add(_ user: NewUser, by author: ChangeAuthor) async throws(UserError) -> User {
        let added = try await base.add(user, by: author)
        log("added", added.id, author)
        return added
    }

    func remove(id: UUID, by author: ChangeAuthor) async throws(UserError) {
        try await base.remove(id: id, by: author)
        log("removed", id, author)
    }

    func importUsers(_ users: [User], by author: ChangeAuthor) async throws(UserError) -> Int {
        let written = try await base.importUsers(users, by: author)
        if written > 0 { journalImport(written, by: author) }
        return written
    }

    func journalImport(_ written: Int, by author: ChangeAuthor) {
        log("imported", nil, author, ["USERLISTD_IMPORTED": String(written)])
    }

    /// The store's staging, with each committed import journaled once, as `importUsers` is.
    var importStaging: (any ImportStaging)? {
        base.importStaging.map { JournaledImportStaging(base: $0, repository: self) }
    }

    // MARK: passed through

    func fetchPage(_ request: PageRequest) async throws(UserError) -> UserPage { try await base.fetchPage(request) }
    func fetchPage(_ request: BackwardPageRequest) async throws(UserError) -> UserPage {
        try await base.fetchPage(request)
    }
    func exportPage(_ request: PageRequest, byteBudget: Int) async throws(UserError) -> UserPage {
        try await base.exportPage(request, byteBudget: byteBudget)
    }
    var readsExportPages: Bool { base.readsExportPages }
    func fetchUser(id: UUID) async throws(UserError) -> User { try await base.fetchUser(id: id) }
    func update(_ user: User) async throws(UserError) -> User { try await base.update(user) }
    func add(_ user: NewUser) async throws(UserError) -> User { try await base.add(user) }
    func remove(id: UUID) async throws(UserError) { try await base.remove(id: id) }
    func importUsers(_ users: [User]) async throws(UserError) -> Int { try await base.importUsers(users) }
    func cursor(after user: User, totalCount: Int?) -> PageCursor? { base.cursor(after: user, totalCount: totalCount) }
    func users(withIDPrefix prefix: UserIDPrefix, limit: Int) async throws(UserError) -> [User] {
        try await base.users(withIDPrefix: prefix, limit: limit)
    }
}

/// A store's all-or-nothing import (`ImportStaging`) whose commits are journaled by the
/// repository that hands it out.
private struct JournaledImportStaging: ImportStaging {
    let base: any ImportStaging
    let repository: JournaledUserRepository

    func beginImport() async throws(UserError) -> ImportToken { try await base.beginImport() }

    func stage(_ entries: [ImportEntry], into token: ImportToken) async throws(UserError) -> Int {
        try await base.stage(entries, into: token)
    }

    func commitImport(_ token: ImportToken, by author: ChangeAuthor?) async throws(UserError) -> ImportSummary {
        let summary = try await base.commitImport(token, by: author)
        if summary.written > 0, let author { repository.journalImport(summary.written, by: author) }
        return summary
    }

    func abortImport(_ token: ImportToken) async { await base.abortImport(token) }
}
