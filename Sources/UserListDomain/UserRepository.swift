import Foundation

/// The contract between the Domain and whatever stores users (SQLite, an HTTP service, a cache).
///
/// Every method throws `UserError` only, so callers can show a person a message without knowing
/// which store is behind it.
public protocol UserRepository: Sendable {
    func fetchPage(_ request: PageRequest) async throws(UserError) -> UserPage
    func fetchUser(id: UUID) async throws(UserError) -> User
    /// Commits `user` if the stored version is still `user.version`; returns the stored result
    /// (with the next version). Otherwise throws `.conflict` carrying the stored user.
    func update(_ user: User) async throws(UserError) -> User
    func add(_ user: NewUser) async throws(UserError) -> User
    func remove(id: UUID) async throws(UserError)
}
