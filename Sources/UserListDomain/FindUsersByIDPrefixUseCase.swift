/// Finds the users whose id starts with a prefix, so that a person can name a user by the first
/// few characters of the id, and be told which users match when those are not enough.
public struct FindUsersByIDPrefixUseCase: Sendable {
    /// The most users one lookup returns: enough to list the candidates of an ambiguous prefix.
    public static let maximumLimit = 100
    private let repository: any UserRepository

    public init(repository: any UserRepository) { self.repository = repository }

    public func execute(_ prefix: UserIDPrefix, limit: Int) async throws(UserError) -> [User] {
        try await repository.users(withIDPrefix: prefix, limit: max(1, min(limit, Self.maximumLimit)))
    }
}
